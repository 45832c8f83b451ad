package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// In a group where the bot sees every message (privacy mode off, or the bot an
// admin), a326a85 stopped answering what is not for it: chatter, service messages,
// and now commands addressed to another bot ("/stats@other_bot"). Every one of them
// still fills the sender's rate window, and the window's warning goes to the chat the
// update came from: a member who talks a lot (here, to another bot) has hangar post
// "Slow down" into the group, about messages none of which were for hangar.
func TestGroupMessagesForOthersBringNoSlowDownIntoTheGroup(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 3, RateWindow: time.Minute})
	// Start has asked getMe (the fake answers hangar_bot): "@other_bot" is known not to be it.
	const user = 77
	for i := range 6 {
		text := "/stats@other_bot"
		if i%2 == 1 {
			text = "ha, nice"
		}
		if r := env.PostUpdate(t, groupUpdate(int64(10+i), user, text, nil)); r.Status != 200 {
			t.Fatalf("update %d: %d %s", i, r.Status, r.Body)
		}
	}
	env.Settle(t)
	time.Sleep(200 * time.Millisecond)
	if got := groupMessages(env); len(got) > 0 {
		t.Fatalf("six group messages, none for hangar (commands @other_bot and chatter), made hangar post to the group: %q", got)
	}
}
