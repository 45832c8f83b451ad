package http_test

import (
	"net/http"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// GET /admin/users/:id answers "a user's balance and latest ledger entries", and the
// console's user view draws its ledger from it, newest on top. It read the ledger
// oldest first and stopped at 1000 entries: past that, a user's newest money moves
// (the deposit an operator just made, the renewal that emptied the balance) were
// never shown, while the balance above them had moved.
func TestUserLedgerShowsTheLatestEntries(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	const user = 77
	for range 1000 {
		if _, err := env.Store.Deposit(user, 1); err != nil {
			t.Fatal(err)
		}
	}
	env.Deposit(t, user, 5000) // the operator's deposit, entry 1001
	var got struct {
		Balance store.Balance       `json:"balance"`
		Ledger  []store.LedgerEntry `json:"ledger"`
	}
	r := env.Admin(t, http.MethodGet, "/admin/users/77", nil)
	if r.Status != 200 {
		t.Fatalf("GET /admin/users/77: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &got)
	if got.Balance.Available != 6000 || got.Balance.Seq != 1001 {
		t.Fatalf("balance %+v, want 6000 after 1001 entries", got.Balance)
	}
	last := got.Ledger[len(got.Ledger)-1]
	if last.Seq != got.Balance.Seq || last.Amount != 5000 {
		t.Fatalf("%d ledger entries shown, the last seq %d (%d); the balance is at seq %d: the latest entry, the 5000 deposit, is missing",
			len(got.Ledger), last.Seq, last.Amount, got.Balance.Seq)
	}
}
