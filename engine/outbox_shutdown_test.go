package engine_test

import (
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// At shutdown the outbox stops sending at once: a send in flight finishes (or is cut
// after about a second) and every other message waits in the store for the next start,
// where it is sent. Nothing is lost and the stop does not drain the queue through a
// slow Telegram.
func TestOutboxKeepsUnsentMessagesAtStop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration // how long the fake Bot API takes per sendMessage
	}{
		{"in-flight send finishes", 300 * time.Millisecond},
		{"in-flight send is cut", time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 10
			dir := t.TempDir()
			env := hangartest.Start(t, hangartest.Options{Dir: dir})
			env.Telegram.SetDelay(tc.delay)
			for i := range n {
				user := int64(7000 + i)
				if r := env.PostUpdate(t, hangartest.Update(int64(i+1), user, "/help")); r.Status != 200 {
					t.Fatalf("webhook: %d %s", r.Status, r.Body)
				}
			}
			hangartest.WaitFor(t, 10*time.Second, "a send to be under way", func() bool { return env.Telegram.Calls() > 0 })
			hangartest.WaitFor(t, 10*time.Second, "every reply to be queued", func() bool {
				q, err := env.Store.QueuedMessages(100)
				n2, _ := env.Store.InboxDepth()
				return err == nil && n2 == 0 && len(q)+len(env.Telegram.Messages()) >= n
			})
			env.Stop()
			before := env.Telegram.Messages()
			// Without the stop signal the outbox sends the whole queue during the stop.
			if len(before) > 3 {
				t.Fatalf("%d of %d messages were sent through Telegram during the stop; want at most the ones in flight", len(before), n)
			}

			env2 := hangartest.Start(t, hangartest.Options{Dir: dir})
			// A send cut at the stop may have reached Telegram and is sent again after
			// the restart (at least once): what counts is that every user got a reply,
			// not how many messages came after the restart.
			chats := map[int64]bool{}
			var after []telegramfake.Message
			missing := func() []int64 {
				after = env2.Telegram.Messages()
				clear(chats)
				for _, m := range append(before, after...) {
					chats[m.ChatID] = true
				}
				var users []int64
				for i := range n {
					if !chats[int64(7000+i)] {
						users = append(users, int64(7000+i))
					}
				}
				return users
			}
			for deadline := time.Now().Add(10 * time.Second); len(missing()) > 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			for _, user := range missing() {
				t.Errorf("user %d never got a reply", user)
			}
			t.Logf("sent before the stop: %d, after the restart: %d", len(before), len(after))
		})
	}
}
