package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A suspended server that is gone at the provider (deleted in the provider's panel,
// or by the provider itself) answers the power off with 404. The op actor treats
// that like any permanent refusal: the power off is dead-lettered and the order stays
// suspended. When the user tops up, billing resumes the order — charging a new period
// — and queues a power on, which gets the same 404 and is dead-lettered too; the
// order is now active and renews every period for a server that does not exist.
// A delete treats 404 as done; a power call on a server that is not there should end
// the order the same way, not keep charging for it.
func TestPowerCallOnAGoneServerStopsBilling(t *testing.T) {
	env, fake, id := linodeBilling(t)
	o, _ := env.Store.GetOrder(id)
	if _, ok := fake.Store.Remove(fake.Instances()[0].ID); !ok {
		t.Fatal("could not remove the server at the fake")
	}
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now())) // unpaid: suspend and power off
	advanceUntil(t, env, "the power off answered", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderTerminated || o.DeadLettered || (o.Status == store.OrderSuspended && o.Op == "")
	})
	env.Deposit(t, billUser, linodePrice) // the user tops up
	advanceUntil(t, env, "billing to look at the top-up", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Status != store.OrderSuspended
	})
	hangartest.WaitFor(t, 5*time.Second, "the order to settle", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Op == "" || o.DeadLettered
	})
	ledger, _ := env.Store.Ledger(billUser, 100)
	renewals := 0
	for _, e := range ledger {
		if e.Kind == store.LedgerRenewal && e.OrderID == id {
			renewals++
		}
	}
	if renewals > 0 || o.Status == store.OrderActive {
		t.Fatalf("the server of order %d is gone at the provider (404 to every call), yet the order is %s (op %q, dead-lettered %v, last error %q) "+
			"and the user was charged %d renewal(s) for it; history %+v", id, o.Status, o.Op, o.DeadLettered, o.LastError, renewals, o.History)
	}
}
