package pages

import "testing"

// Every kind of ledger line the store writes shows the direction it moved the money;
// a renewal, a refund and a hold moved away used to show as credits.
func TestLedgerSignFollowsTheMoney(t *testing.T) {
	for kind, want := range map[string]string{
		"deposit": "+", "topup": "+", "release": "+", "refund_reversed": "+", "move_in": "+",
		"hold": "-", "capture": "-", "renewal": "-", "refund": "-", "move_out": "-",
	} {
		if got := ledgerSign(kind); got != want {
			t.Errorf("ledgerSign(%q) = %q, want %q", kind, got, want)
		}
	}
}
