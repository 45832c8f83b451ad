package engine_test

import (
	"sort"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// A reply whose hand-over to the outbox arrives after a rescan found it in the store
// (and it was sent) is not sent again. Here the outbox is busy with a slow send while
// an operator's cancel asks it to rescan and a second user's reply is committed: the
// rescan takes the reply from the store, then its hand-over arrives.
func TestReplyFoundByARescanIsSentOnce(t *testing.T) {
	const first, second = 501, 502
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 42, 1_000_000)
	pause(t, env, true) // the order stays pending, to be cancelled
	id := env.Order(t, 42, "sim-nano", "tokyo")
	time.Sleep(1100 * time.Millisecond) // past the outbox's least time between rescans
	env.Telegram.SetDelay(700 * time.Millisecond)
	if r := env.PostUpdate(t, hangartest.Update(1, first, "/help")); r.Status != 200 {
		t.Fatalf("update 1: %d", r.Status)
	}
	time.Sleep(100 * time.Millisecond)                    // the outbox is in the first reply's send
	if _, err := env.Engine.CancelOrder(id); err != nil { // pokes the outbox: a rescan
		t.Fatal(err)
	}
	if r := env.PostUpdate(t, hangartest.Update(2, second, "/help")); r.Status != 200 {
		t.Fatalf("update 2: %d", r.Status)
	}
	time.Sleep(3 * time.Second) // both replies, the cancel notice, and a duplicate if any
	n := 0
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == second {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the second user got their reply %d times, want once", n)
	}
}

// The outbox keeps to Telegram's overall limit whatever wakes it: replies handed over
// one by one each started a drain with a budget of its own, so a burst of users went
// out at up to ten times the limit.
func TestOutboxKeepsTelegramsRate(t *testing.T) {
	const users, perSecond = 90, 30
	env := hangartest.Start(t, hangartest.Options{SendInterval: time.Second / perSecond})
	for u := range int64(users) {
		if r := env.PostUpdate(t, hangartest.Update(u+1, 1000+u, "/help")); r.Status != 200 {
			t.Fatalf("update %d: %d", u+1, r.Status)
		}
	}
	msgs, ok := env.Telegram.WaitMessages(users, 10*time.Second)
	if !ok {
		t.Fatalf("%d of %d replies sent", len(msgs), users)
	}
	at := make([]time.Time, len(msgs))
	for i, m := range msgs {
		at[i] = m.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	// Counted in windows a little under a second: the fake records when each message
	// arrived, a few milliseconds after it was sent.
	worst := 0
	for i := range at {
		j := sort.Search(len(at), func(k int) bool { return !at[k].Before(at[i].Add(950 * time.Millisecond)) })
		worst = max(worst, j-i)
	}
	if worst > perSecond {
		t.Fatalf("%d messages sent within one second, want at most %d", worst, perSecond)
	}
}

// A reply that could not be stored (the update's commit failed; the user is answered
// anyway) survives a short Telegram outage: it backs off as a stored message does.
// It was tried on every drain and dropped after twelve tries, in about two seconds.
func TestUnstoredReplySurvivesAShortOutage(t *testing.T) {
	const user = 77
	fs := &failUpdateOnce{id: 1}
	env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store { fs.Store = s; return fs }})
	env.Telegram.SetDown(true)
	if r := env.PostUpdate(t, hangartest.Update(1, user, "/help")); r.Status < 500 {
		t.Fatalf("the update whose commit failed answered %d", r.Status)
	}
	time.Sleep(2800 * time.Millisecond)
	env.Telegram.SetDown(false)
	hangartest.WaitFor(t, 10*time.Second, "the reply after the outage", func() bool {
		env.Clock.Advance(time.Second) // its retry comes due on the engine's clock
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == user {
				return true
			}
		}
		return false
	})
}

// Telegram's 429s do not use up a message's tries: they are about the rate, not the
// message. Twelve of them in a row dropped a reply.
func TestThrottledReplyIsNotDropped(t *testing.T) {
	const user = 88
	env := hangartest.Start(t, hangartest.Options{})
	env.Telegram.Throttle(15, 1)
	if r := env.PostUpdate(t, hangartest.Update(1, user, "/help")); r.Status != 200 {
		t.Fatalf("update: %d", r.Status)
	}
	hangartest.WaitFor(t, 15*time.Second, "the reply after fifteen 429s", func() bool {
		env.Clock.Advance(2 * time.Second) // past each retry_after, on the engine's clock
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == user {
				return true
			}
		}
		return false
	})
}
