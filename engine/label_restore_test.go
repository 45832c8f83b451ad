package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// After `hangar restore` of an older backup, the provider still holds the servers of
// the orders the backup missed (hangar-order-1 and -2 here), and the store would hand
// their ids out again: at Linode, where labels are unique, each such order's create is
// refused and the order dead-lettered. A reconcile run (the README says to run one
// right after a restore) moves the order ids past every label no order here has.
func TestOrderAfterARestoreAndAReconcileGetsAFreeLabel(t *testing.T) {
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	env := hangartest.Start(t, hangartest.Options{
		Queue:     engine.QueueConfig{Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	// The servers of orders 1 and 2, which the restored backup predates.
	for id := int64(1); id <= 2; id++ {
		fake.Seed(engine.InstanceLabel(id), "ap-northeast", "g6-nanode-1")
	}
	if _, err := env.Engine.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.Deposit(t, 42, 1_000_000)
	id := env.Order(t, 42, "linode-nano", "ap-northeast")
	if id <= 2 {
		t.Fatalf("order id %d after the reconcile: the provider holds hangar-order-1 and -2", id)
	}
	var o store.Order
	hangartest.WaitFor(t, 10*time.Second, "the order's first attempt to end", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Status != store.OrderPending && o.Status != store.OrderProvisioning
	})
	if o.Status != store.OrderActive {
		var told string
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == 42 && strings.Contains(m.Text, "failed") {
				told = m.Text
			}
		}
		t.Fatalf("order %d, placed after a restore and a reconcile, is %s (%q); the user was told:\n%s",
			id, o.Status, o.LastError, told)
	}
}
