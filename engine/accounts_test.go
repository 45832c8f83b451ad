package engine_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// Seed 002's account rule: money belongs to user_id, telegram_user_id is where the
// messages go. The README's first order deposits to user 1 and orders as user 1 for
// Telegram 42; before the rule it was refused with 402.
func TestMoneyFollowsUserIDMessagesFollowTelegramID(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 1, 20000)
	r := env.Bearer(t, http.MethodPost, "/orders", []byte(`{"user_id":1,"telegram_user_id":"42","spec_id":"sim-nano","region":"tokyo"}`))
	if r.Status != http.StatusCreated {
		t.Fatalf("order as user 1 for Telegram 42: %d %s", r.Status, r.Body)
	}
	var created struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &created)

	var acct struct {
		Balance store.Balance       `json:"balance"`
		Ledger  []store.LedgerEntry `json:"ledger"`
	}
	env.Admin(t, http.MethodGet, "/admin/users/1", nil).JSON(t, &acct)
	held := false
	for _, e := range acct.Ledger {
		held = held || (e.Kind == store.LedgerHold && e.OrderID == created.OrderID)
	}
	if !held {
		t.Fatalf("user 1's ledger has no hold for order %d: %+v", created.OrderID, acct.Ledger)
	}
	var tg struct {
		Balance store.Balance `json:"balance"`
	}
	env.Admin(t, http.MethodGet, "/admin/users/42", nil).JSON(t, &tg)
	if tg.Balance.Available != 0 || tg.Balance.Held != 0 {
		t.Fatalf("Telegram id 42 has money: %+v", tg.Balance)
	}

	env.WaitStatus(t, created.OrderID, store.OrderActive, 10*time.Second)
	hangartest.WaitFor(t, 10*time.Second, "the ready message in chat 42", func() bool {
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == 42 && strings.Contains(m.Text, "Your server is ready") {
				return true
			}
		}
		return false
	})
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == 1 {
			t.Errorf("a message went to chat 1, the user_id: %q", m.Text)
		}
	}
	if b, _ := env.Store.GetBalance(1); b.Available != 20000-5000 || b.Held != 0 {
		t.Fatalf("user 1 after capture: %+v", b)
	}
}
