package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

const testGroup = -1001234567890

// groupUpdate is a message in a supergroup from user; extra fields are merged into the
// message (a service message has no text).
func groupUpdate(updateID, user int64, text string, extra map[string]any) []byte {
	msg := map[string]any{
		"message_id": updateID, "date": 1764417600,
		"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
		"chat": map[string]any{"id": testGroup, "type": "supergroup", "title": "ops"},
	}
	if text != "" {
		msg["text"] = text
	}
	for k, v := range extra {
		msg[k] = v
	}
	b, _ := json.Marshal(map[string]any{"update_id": updateID, "message": msg})
	return b
}

// groupMessages is what the bot posted to the group.
func groupMessages(env *hangartest.Env) []string {
	var out []string
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == testGroup {
			out = append(out, m.Text)
		}
	}
	return out
}

// post sends an update and then /help from the same user to the group, and waits for
// the help: the user's actor handles updates in order, so everything the first one
// made the bot say is queued before the help.
func postThenHelp(t *testing.T, env *hangartest.Env, first []byte, helpID, user int64) {
	t.Helper()
	if r := env.PostUpdate(t, first); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if r := env.PostUpdate(t, groupUpdate(helpID, user, "/help", nil)); r.Status != 200 {
		t.Fatalf("/help: %d %s", r.Status, r.Body)
	}
	env.Settle(t)
	hangartest.WaitFor(t, 10*time.Second, "the help in the group", func() bool { return len(groupMessages(env)) > 0 })
}

// Every bot, privacy mode or not, receives a group's service messages (someone
// joined, left, pinned a message, the bot was added): they come with a "from" and no
// text. The bot answers each with "I only understand commands" in the group, for all
// its members to read, on every join.
func TestGroupServiceMessageGetsNoReply(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	joined := groupUpdate(10, 77, "", map[string]any{
		"new_chat_members": []any{map[string]any{"id": 78, "is_bot": false, "first_name": "Bob"}},
	})
	postThenHelp(t, env, joined, 11, 77)
	if got := groupMessages(env); len(got) != 1 {
		t.Fatalf("a member joining the group made the bot post to the group; want only the /help answer, got %d messages: %q", len(got), got)
	}
}

// In a group where the bot sees all messages (privacy mode off, or the bot is an
// admin), people talk to each other; the bot must not answer each remark.
func TestGroupChatterGetsNoReply(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	postThenHelp(t, env, groupUpdate(10, 77, "anyone up for lunch?", nil), 11, 77)
	if got := groupMessages(env); len(got) != 1 {
		t.Fatalf("an ordinary group message got an answer; want only the /help answer, got %d messages: %q", len(got), got)
	}
}

// "/balance@other_bot" is addressed to another bot in the group (Telegram delivers it
// to every bot that sees all messages). splitCommand drops whatever follows "@", so
// hangar answers a command that was not for it, posting the user's balance in the group.
func TestCommandForAnotherBotIsIgnored(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 77, 12345)
	postThenHelp(t, env, groupUpdate(10, 77, "/balance@other_bot", nil), 11, 77)
	if got := groupMessages(env); len(got) != 1 {
		t.Fatalf("a command for another bot was answered; want only the /help answer, got %d messages: %q", len(got), got)
	}
}

// Button presses past the user's limit are each answered with the slow-down notice as
// their toast (only the presser sees it), in a group as in a private chat, and nothing
// is posted: a refused press used to get no answer at all, its spinner turning until
// Telegram gave up.
func TestRefusedButtonPressesAreAnswered(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 1, RateWindow: time.Minute})
	const user = 77
	press := func(id int64) {
		b, _ := json.Marshal(map[string]any{"update_id": id, "callback_query": map[string]any{
			"id": fmt.Sprintf("cb%d", id), "data": "ox:0123456789abcdef", "chat_instance": "1",
			"from":    map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
			"message": map[string]any{"message_id": 1, "date": 1764417600, "chat": map[string]any{"id": testGroup, "type": "supergroup"}},
		}})
		if r := env.PostUpdate(t, b); r.Status != 200 {
			t.Fatalf("press %d: %d %s", id, r.Status, r.Body)
		}
	}
	for id := int64(1); id <= 4; id++ {
		press(id)
	}
	env.Settle(t)
	answered := map[string]string{}
	for _, cb := range env.Telegram.Callbacks() {
		answered[cb.ID] = cb.Text
	}
	for id := 1; id <= 4; id++ {
		if _, ok := answered[fmt.Sprintf("cb%d", id)]; !ok {
			t.Errorf("press %d was never answered; answers: %v", id, answered)
		}
	}
	if !strings.Contains(answered["cb4"], "too fast") {
		t.Errorf("the last refused press's answer is %q, want the slow-down notice", answered["cb4"])
	}
	if got := groupMessages(env); len(got) != 0 {
		t.Errorf("the group was posted %q", got)
	}
}

// /balance and /servers asked in a group answer in the asker's private chat, with a
// note in the group: the balance (KRW 12,345 here) and the servers' IPs were posted
// for everyone in it to read.
func TestMoneyAndServersAreAnsweredPrivately(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 77, 12345)
	for i, cmd := range []string{"/balance", "/servers"} {
		if r := env.PostUpdate(t, groupUpdate(int64(10+i), 77, cmd, nil)); r.Status != 200 {
			t.Fatalf("%s: %d", cmd, r.Status)
		}
	}
	env.Settle(t)
	group := groupMessages(env)
	for _, m := range group {
		if strings.Contains(m, "12,345") {
			t.Fatalf("the group was shown the balance: %q", m)
		}
	}
	if len(group) != 2 || !strings.Contains(group[0], "private chat") {
		t.Fatalf("the group got %q, want two notes that the answers went privately", group)
	}
	private := 0
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == 77 {
			private++
			if private == 1 && !strings.Contains(m.Text, "12,345") {
				t.Fatalf("the private answer to /balance is %q", m.Text)
			}
		}
	}
	if private != 2 {
		t.Fatalf("%d private answers, want 2", private)
	}
}

// A quote asked for in a group leaves the asker's balance out: everyone there reads it.
func TestQuoteInAGroupLeavesTheBalanceOut(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 77, 12345)
	postThenHelp(t, env, groupUpdate(10, 77, "/order sim-nano tokyo", nil), 11, 77)
	group := groupMessages(env)
	if len(group) != 2 || !strings.Contains(group[0], "sim") && !strings.Contains(group[0], "Simulated") {
		t.Fatalf("the group got %q, want the quote and the help", group)
	}
	if strings.Contains(group[0], "12,345") {
		t.Fatalf("the quote in the group shows the balance: %q", group[0])
	}
}
