package engine_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A reminder whose time passed while the daemon was down is sent when it comes back,
// not skipped: billing's due times are rebuilt on start from "the next reminder not yet
// due", so the first reminder (72 h by default) was lost and the user learned of the
// missing money only at the second (24 h), or never if that one passed too.
func TestReminderDueDuringDowntimeIsSent(t *testing.T) {
	sim := cloud.NewSim(cloud.SimConfig{Rand: rand.New(rand.NewPCG(1, 1))})
	opts := hangartest.Options{AdminChatID: billAdmin, Billing: billing, Providers: map[string]engine.Provider{"sim": sim}}
	env := hangartest.Start(t, opts)
	// The order is placed 41 minutes before the clock the restarted daemon starts at,
	// so that its first reminder (20 minutes before the end) falls in the downtime.
	env.Clock.Advance(-41 * time.Minute)
	env.Deposit(t, billUser, simPrice) // the first period only: the next one is not covered
	id := env.Order(t, billUser, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	env.Stop()

	// Back 19 minutes before the end: the first reminder is a minute overdue.
	opts.Dir = env.Dir
	again := hangartest.Start(t, opts)
	if d := o.PaidUntil.Sub(again.Clock.Now()); d != 19*time.Minute {
		t.Fatalf("restarted %v before the end, want 19m", d)
	}
	for range 40 { // ten minutes of billing ticks, still before the second reminder
		again.Clock.Advance(15 * time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	got, _ := again.Store.GetOrder(id)
	if got.Reminded == 0 || len(messagesTo(again, billUser, "missing")) == 0 {
		t.Fatalf("%v before the end, after a downtime over the first reminder: reminded %d, reminder messages %d; want the overdue reminder sent",
			got.PaidUntil.Sub(again.Clock.Now()), got.Reminded, len(messagesTo(again, billUser, "missing")))
	}
}

// Two servers of one user end together and the balance pays one renewal: one of them
// will be suspended, so the user must be reminded. Each reminder compared the whole
// balance with its own order's price alone, so neither reminded and a server was
// suspended without a warning.
func TestReminderCountsTheUsersOtherRenewals(t *testing.T) {
	env, _ := billSetup(t, 3*simPrice) // two first periods, and one renewal
	a := env.Order(t, billUser, "sim-nano", "tokyo")
	b := env.Order(t, billUser, "sim-nano", "tokyo")
	oa := env.WaitStatus(t, a, store.OrderActive, 10*time.Second)
	ob := env.WaitStatus(t, b, store.OrderActive, 10*time.Second)
	ledgerAgrees(t, env, simPrice)
	end := oa.PaidUntil
	if ob.PaidUntil.After(end) {
		end = ob.PaidUntil
	}
	// Minute by minute up to the second reminder (20 and 5 minutes before the end).
	env.Clock.Advance(end.Sub(env.Clock.Now()) - 21*time.Minute)
	for range 16 {
		env.Clock.Advance(time.Minute)
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	ra, _ := env.Store.GetOrder(a)
	rb, _ := env.Store.GetOrder(b)
	if ra.Reminded == 0 && rb.Reminded == 0 {
		// What follows: one of them is suspended at the end, unannounced.
		env.Clock.Advance(6 * time.Minute)
		hangartest.WaitFor(t, 5*time.Second, "one renewed, one suspended", func() bool {
			x, _ := env.Store.GetOrder(a)
			y, _ := env.Store.GetOrder(b)
			return (x.Status == store.OrderSuspended) != (y.Status == store.OrderSuspended)
		})
		t.Fatalf("balance %d pays one of two renewals of %d each, yet no reminder was sent (reminded %d and %d); one server was then suspended without warning",
			simPrice, simPrice, ra.Reminded, rb.Reminded)
	}
}

// A server suspended late (the daemon was down, or the clock stepped forward, past
// its period's end and the grace) gets its grace from the suspension: the grace is
// "how long it stays suspended before termination". It was counted from the period's
// end, so the server was suspended and deleted in the same second, the user told of a
// deadline already past.
func TestGraceCountsFromTheSuspension(t *testing.T) {
	env, sim := billSetup(t, simPrice)
	id := env.Order(t, billUser, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()) + billing.Grace + 10*time.Minute)
	suspendedAt := env.Clock.Now()
	o = waitOrder(t, env, id, "a step at the end of the period", func(o store.Order) bool { return o.Status != store.OrderActive || o.Op != "" })
	time.Sleep(200 * time.Millisecond) // billing ticks every 5 ms; the clock stays put
	o, _ = env.Store.GetOrder(id)
	if o.Status != store.OrderSuspended || o.Op == store.OpDelete || o.GraceUntil.Before(suspendedAt.Add(billing.Grace)) {
		t.Fatalf("suspended at %v with a %v grace: now %s, op %q, grace until %v, server %s at the provider; want suspended until %v at least",
			suspendedAt.Format(time.TimeOnly), billing.Grace, o.Status, o.Op, o.GraceUntil.Format(time.TimeOnly), simStatus(t, sim, o.InstanceID),
			suspendedAt.Add(billing.Grace).Format(time.TimeOnly))
	}
}
