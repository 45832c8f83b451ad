package store

import (
	"bytes"
	"math"
	"strconv"
	"testing"
)

// A ledger entry's key is its user's ledger prefix and its sequence number: the
// ledger's scans find exactly the user's entries, in sequence order.
func TestLedgerKeyExtendsTheUsersPrefix(t *testing.T) {
	for _, tc := range []struct {
		user int64
		seq  uint64
	}{{0, 0}, {5, 1}, {5123456789, 1 << 40}, {-42, 7}, {math.MaxInt64, math.MaxUint64}, {math.MinInt64, 3}} {
		key, want := ledgerKey(tc.user, tc.seq), u64Key(ledgerPrefix(tc.user), tc.seq)
		if !bytes.Equal(key, want) {
			t.Errorf("ledgerKey(%d, %d) = %q, want %q", tc.user, tc.seq, key, want)
		}
		if other := ledgerPrefix(tc.user + 1); tc.user != math.MaxInt64 && bytes.HasPrefix(key, []byte(other)) {
			t.Errorf("ledgerKey(%d, %d) = %q lies under user %d's prefix %q", tc.user, tc.seq, key, tc.user+1, other)
		}
	}
}

// The keys of per-user records are their prefix and the user id in decimal, whatever
// the id, and building one allocates once.
func TestIntKeyIsPrefixAndDecimalID(t *testing.T) {
	for _, id := range []int64{0, 7, -42, 5123456789, math.MaxInt64, math.MinInt64} {
		want := prefixBalance + strconv.FormatInt(id, 10)
		if got := string(balanceKey(id)); got != want {
			t.Errorf("balanceKey(%d) = %q, want %q", id, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = rateLimitKey(math.MinInt64) }); n != 1 {
		t.Errorf("a window's key took %.0f allocations, want 1", n)
	}
}
