package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/store"
)

// A password sealed into the commit that starts an order's first attempt is the one
// every later attempt (Issue) and the message (Reveal) get, across a restart; a sweep
// while that commit is being made keeps its key; orders from before the vault are not
// sealed at all (they keep their derived password).
func TestVaultSealerPasswordIsTheOneIssuedLater(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	legacyKey := []byte("an old password.key of 32 bytes!")
	v, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, legacyKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Deposit(7, 1_000_000); err != nil {
		t.Fatal(err)
	}
	o, err := st.CreateOrder(store.Order{UserID: 7, TelegramUserID: 7, Provider: "sim", SpecID: "sim-nano", Region: "tokyo", PricePaid: 100}, store.OrderLimit{})
	if err != nil {
		t.Fatal(err)
	}
	seal, release, err := v.Sealer()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := seal(store.Order{ID: 99, CreatedAt: time.Now().Add(-time.Hour)}); ok {
		t.Fatal("an order from before the vault was sealed a new password")
	}
	// A sweep before the commit must not take the key the commit's password needs.
	if err := v.Sweep(time.Now(), time.Minute, func(int64) bool { return true }); err != nil {
		t.Fatal(err)
	}
	var pw string
	_, err = st.UpdateOrders([]store.OrderChange{{ID: o.ID,
		Apply: func(o *store.Order) error { o.Status = store.OrderProvisioning; o.Attempts++; return nil },
		Seal: func(o *store.Order) (store.SealedPassword, bool) {
			p, sealed, ok := seal(*o)
			pw = p
			return sealed, ok
		}}})
	release()
	if err != nil || len(pw) < 16 {
		t.Fatalf("start commit: %v, password %q", err, pw)
	}
	if got, err := v.Issue(o); err != nil || got != pw {
		t.Fatalf("a later attempt got %q, %v; want the sealed %q", got, err, pw)
	}
	v2, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, legacyKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := v2.Reveal(o.ID); err != nil || !ok || got != pw {
		t.Fatalf("after a restart Reveal = %q, %v, %v; want %q", got, ok, err, pw)
	}
}
