package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A Stars payment from a user at their message limit is credited: Telegram has taken
// the Stars by then (the pre-checkout is answered whatever the limit), and the limit
// turned the payment away while the update was acknowledged, so it was never credited
// nor delivered again.
func TestPaymentOfARateLimitedUserIsCredited(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{StarsRate: 20, RateLimit: 3, RateWindow: time.Minute})
	post(t, env, message(1, 42, "en", "/topup 5000"))
	invs, ok := env.Telegram.WaitInvoices(1, 10*time.Second)
	if !ok {
		t.Fatal("no invoice")
	}
	post(t, env, message(2, 42, "en", "/balance"))
	post(t, env, message(3, 42, "en", "/balance")) // the limit is reached
	post(t, env, env.Telegram.PaymentUpdate(4, 42, "en", invs[0].Payload, invs[0].Stars, "ch_limited"))
	b, err := env.Store.GetBalance(42)
	if err != nil {
		t.Fatal(err)
	}
	if _, perr := env.Store.GetPayment("ch_limited"); b.Available != 5000 || perr != nil {
		t.Fatalf("%d Stars paid at the limit: balance %d, payment record: %v", invs[0].Stars, b.Available, perr)
	}
}

// A root password never goes to a group: asked for with /password in a group, it is
// sent to the owner's private chat, and the group is told so.
func TestPasswordIsNeverSentToAGroup(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 42, 1_000_000)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	b, _ := json.Marshal(map[string]any{"update_id": 1, "message": map[string]any{
		"message_id": 1, "date": 1764417600, "text": fmt.Sprintf("/password %d", id),
		"from": map[string]any{"id": 42, "is_bot": false, "first_name": "Ada"},
		"chat": map[string]any{"id": -100777, "type": "supergroup"}}})
	post(t, env, b)
	pw := env.Password(id)
	hangartest.WaitFor(t, 10*time.Second, "the password in the owner's private chat and a notice in the group", func() bool {
		private, notice := 0, false
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == 42 && strings.Contains(m.Text, pw) {
				private++
			}
			if m.ChatID == -100777 {
				notice = true
			}
		}
		return private >= 2 && notice // the ready message, then /password's
	})
	for _, m := range env.Telegram.Messages() {
		if m.ChatID != 42 && strings.Contains(m.Text, pw) {
			t.Fatalf("the root password went to chat %d: %q", m.ChatID, m.Text)
		}
	}
}

// A payment whose charge id was credited to another user tells this one nothing of
// that account: it was answered "credited", with the other user's balance.
func TestChargeIDOfAnotherUserIsNotShown(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{StarsRate: 20})
	env.Deposit(t, 42, 777_000)
	post(t, env, message(1, 42, "en", "/topup 5000"))
	invs, _ := env.Telegram.WaitInvoices(1, 10*time.Second)
	post(t, env, env.Telegram.PaymentUpdate(2, 42, "en", invs[0].Payload, invs[0].Stars, "ch_x"))
	post(t, env, message(3, 43, "en", "/topup 5000"))
	invs, _ = env.Telegram.WaitInvoices(2, 10*time.Second)
	post(t, env, env.Telegram.PaymentUpdate(4, 43, "en", invs[1].Payload, invs[1].Stars, "ch_x"))
	waitText(t, env, 43, "ch_x") // the refusal names the charge
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == 43 && strings.Contains(m.Text, "782,000") {
			t.Fatalf("user 43 was told user 42's balance: %q", m.Text)
		}
	}
	if b, _ := env.Store.GetBalance(43); b.Available != 0 {
		t.Fatalf("user 43 credited %d for a charge that was 42's", b.Available)
	}
}
