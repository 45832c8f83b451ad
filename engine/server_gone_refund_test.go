package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A suspended server, powered off, is deleted at the provider. The user tops up:
// billing renews the order — charging a whole period in the same commit — and queues
// the power on, which the provider answers 404. server_gone then terminates the
// order, but the period just charged stays charged: the user paid a full period for a
// server that was already gone when the payment was taken, and nothing gives it back.
// (The power off case is fine: nothing is charged there.)
func TestServerGoneAtPowerOnGivesTheRenewalBack(t *testing.T) {
	env, fake, id := linodeBilling(t)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now())) // unpaid: suspended, powered off
	advanceUntil(t, env, "the server powered off", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderSuspended && o.PoweredOff && o.Op == ""
	})
	if _, ok := fake.Store.Remove(fake.Instances()[0].ID); !ok {
		t.Fatal("could not remove the server at the fake")
	}
	env.Deposit(t, billUser, linodePrice) // the top-up pays the next period
	advanceUntil(t, env, "the order to end", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderTerminated || o.DeadLettered
	})
	hangartest.WaitFor(t, 5*time.Second, "the op to settle", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Op == "" || o.DeadLettered
	})
	b, err := env.Store.GetBalance(billUser)
	if err != nil {
		t.Fatal(err)
	}
	ledger, _ := env.Store.Ledger(billUser, 100)
	renewals := 0
	for _, e := range ledger {
		if e.Kind == store.LedgerRenewal && e.OrderID == id {
			renewals++
		}
	}
	if o.Status == store.OrderTerminated && b.Available < linodePrice {
		t.Fatalf("order %d ended as server_gone at its power on, yet the renewal charged for it (%d renewal entries) stays: available %d, want the top-up of %d back; history %+v",
			id, renewals, b.Available, linodePrice, o.History)
	}
}
