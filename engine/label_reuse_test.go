package engine_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A server already labelled hangar-order-<id> before order <id> ever started (another
// hangar on the same account, or the servers of orders lost by `hangar restore` from
// an older backup, whose ids the restored store hands out again) is not this order's:
// its first attempt made no create. Linode refuses the create ("label must be unique")
// and Linode.Create then adopts the stranger's server: the new user is handed
// someone else's machine as their own, and charged for it.
func TestFirstAttemptDoesNotAdoptAForeignServer(t *testing.T) {
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	env := hangartest.Start(t, hangartest.Options{
		Queue:     engine.QueueConfig{Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	env.Deposit(t, 42, 1_000_000)
	if _, _, err := env.Engine.PauseQueue("test"); err != nil {
		t.Fatal(err)
	}
	id := env.Order(t, 42, "linode-nano", "ap-northeast")
	// The stranger's server: it was there before this order's first attempt.
	foreign := fake.Seed(engine.InstanceLabel(id), "ap-northeast", "g6-nanode-1")
	if _, _, err := env.Engine.ResumeQueue("test"); err != nil {
		t.Fatal(err)
	}

	hangartest.WaitFor(t, 10*time.Second, "the order's first attempt to end", func() bool {
		o, _ := env.Store.GetOrder(id)
		return o.Status != store.OrderPending && o.Status != store.OrderProvisioning
	})
	o, _ := env.Store.GetOrder(id)
	if o.InstanceID == strconv.Itoa(foreign.ID) {
		t.Fatalf("order %d (first attempt, no earlier create) adopted server %d that existed before it, IP %s; "+
			"history %+v", id, foreign.ID, o.IPAddress, o.History)
	}
}

// The same collision at Vultr, whose labels are not unique: the order makes its own
// server beside the stranger's, and the reconciler then takes the stranger's for a
// "second server for a running order" and deletes it, although it existed before the
// order did. Duplicates are deleted whatever --reconcile-delete-orphans says, so a
// server hangar never created for this order is destroyed without the operator's leave.
func TestReconcilerKeepsAServerOlderThanItsOrder(t *testing.T) {
	fake := vultrfake.New(vultrKey, fakeapi.WithBootDelay(0))
	defer fake.Close()
	env := startRec(t, t.TempDir(), fake, time.Millisecond, engine.ReconcileConfig{Every: -1})
	if _, _, err := env.eng.PauseQueue("test"); err != nil {
		t.Fatal(err)
	}
	o := env.order(t, 42)
	foreign := fake.Seed(engine.InstanceLabel(o.ID), "nrt", "vc2-1c-1gb")
	// Made an hour before the order (the servers of orders a restore lost).
	fake.Store.Change(foreign.ID, func(in vultrfake.Instance) vultrfake.Instance {
		in.Created = o.CreatedAt.Add(-time.Hour)
		return in
	})
	foreign, _ = fake.Store.Lookup(foreign.ID)
	if !foreign.Created.Before(o.CreatedAt) {
		t.Fatalf("seeded server created %v, not before the order (%v)", foreign.Created, o.CreatedAt)
	}
	if _, _, err := env.eng.ResumeQueue("test"); err != nil {
		t.Fatal(err)
	}
	active := env.waitStatus(t, o.ID, store.OrderActive)
	rep, err := env.eng.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.Store.Lookup(foreign.ID); !ok {
		t.Fatalf("the reconciler deleted server %s, created %v, before order %d existed (%v; the order keeps %s); duplicates %+v",
			foreign.ID, foreign.Created, o.ID, o.CreatedAt, active.InstanceID, rep.Duplicates)
	}
}
