package engine_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A server whose deletion the provider keeps refusing is not renewed: the order is
// being terminated, and a renewal would charge for a server on its way out. Billing
// renewed it at the end of every period while the reconciler retried the delete.
func TestOrderBeingTerminatedIsNotRenewed(t *testing.T) {
	env, fake, id := linodeBilling(t)
	env.Deposit(t, billUser, linodePrice) // enough for the next period
	fake.FailNext(1000, 503)
	if _, err := env.Engine.TerminateOrder(id); err == nil {
		t.Fatal("the termination succeeded although the provider refused the delete")
	}
	o := waitOrder(t, env, id, "being terminated", func(o store.Order) bool { return o.Terminating })
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()) + time.Minute)
	for range 40 { // billing ticks every 5 ms of the test's clock
		env.Clock.Advance(5 * time.Millisecond)
		time.Sleep(5 * time.Millisecond)
	}
	o, _ = env.Store.GetOrder(id)
	if r := renewals(ledgerAgrees(t, env, linodePrice), id); len(r) != 0 || o.Status != store.OrderActive || o.Period != 1 {
		t.Fatalf("order being terminated: %s, period %d, renewals %v; want it active in period 1 and nothing charged", o.Status, o.Period, r)
	}
	if _, err := env.Engine.RenewOrder(id); err == nil {
		t.Error("an order being terminated was renewed on request")
	}
}

// gatedDelete is the simulator with its first Delete held until release.
type gatedDelete struct {
	*cloud.Sim
	once             sync.Once
	entered, release chan struct{}
}

func (g *gatedDelete) Delete(ctx context.Context, id string) error {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	return g.Sim.Delete(ctx, id)
}

// A termination whose provider call outlasts the paid period ends the order: billing
// does not suspend an order being terminated. It did, the termination then refused to
// end a suspended order, and the user's next top-up resumed it and paid a period for a
// server that no longer existed.
func TestTerminationOutlastingThePeriodEndsTheOrder(t *testing.T) {
	sim := &gatedDelete{Sim: cloud.NewSim(cloud.SimConfig{Rand: rand.New(rand.NewPCG(1, 1))}),
		entered: make(chan struct{}), release: make(chan struct{})}
	env := hangartest.Start(t, hangartest.Options{AdminChatID: billAdmin, Billing: billing,
		Providers: map[string]engine.Provider{"sim": sim}})
	env.Deposit(t, billUser, simPrice)
	id := env.Order(t, billUser, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	done := make(chan error, 1)
	go func() { _, err := env.Engine.TerminateOrder(id); done <- err }()
	<-sim.entered
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now())) // the balance cannot pay the next period
	for range 40 {
		env.Clock.Advance(5 * time.Millisecond)
		time.Sleep(5 * time.Millisecond)
	}
	if o, _ = env.Store.GetOrder(id); o.Status != store.OrderActive || !o.Terminating {
		t.Errorf("during the provider's delete: %s, terminating %v; want active and terminating", o.Status, o.Terminating)
	}
	close(sim.release)
	if err := <-done; err != nil {
		t.Fatalf("terminate: %v", err)
	}
	env.WaitStatus(t, id, store.OrderTerminated, 5*time.Second)
	env.Deposit(t, billUser, simPrice)
	for range 40 {
		env.Clock.Advance(5 * time.Millisecond)
		time.Sleep(5 * time.Millisecond)
	}
	o, _ = env.Store.GetOrder(id)
	if r := renewals(ledgerAgrees(t, env, simPrice), id); len(r) != 0 || o.Status != store.OrderTerminated || o.Op != "" {
		t.Fatalf("after a top-up: %s, op %q, renewals %v; want terminated, nothing queued or charged", o.Status, o.Op, r)
	}
}

// A power on purged as a dead letter is queued again: the server is paid for, and
// left off it would stay off while its periods were charged.
func TestPurgedPowerOnIsQueuedAgain(t *testing.T) {
	env, fake, id := linodeBilling(t)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	waitOrder(t, env, id, "suspended and off", func(o store.Order) bool { return o.PoweredOff && o.Op == "" })
	fake.FailNext(3, 503)
	env.Deposit(t, billUser, 2*linodePrice)
	advanceUntil(t, env, "the power on dead-lettered", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.DeadLettered && o.Op == store.OpPowerOn
	})
	hangartest.WaitFor(t, 5*time.Second, "the dead letter reported", func() bool { return queueStats(t, env).DeadLetters == 1 })
	if n, err := env.Engine.PurgeDeadLetters(); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	o = waitOrder(t, env, id, "powered on", func(o store.Order) bool { return !o.PoweredOff && o.Op == "" })
	if o.Status != store.OrderActive || offAtLinode(fake) {
		t.Fatalf("after the purge: %s, off at Linode %v; want active and on", o.Status, offAtLinode(fake))
	}
}
