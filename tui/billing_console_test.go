package tui_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/client"
)

// realConsole runs the console against a whole hangar (HTTP, engine, store, the
// simulator) whose billing period is an hour of its settable clock, with one active
// order of user 42 that the balance pays for no longer than its first period.
func realConsole(t *testing.T) (bundle, *hangartest.Env, store.Order) {
	t.Helper()
	sim := cloud.NewSim(cloud.SimConfig{Rand: rand.New(rand.NewPCG(1, 1))})
	env := hangartest.Start(t, hangartest.Options{Providers: map[string]engine.Provider{"sim": sim},
		Billing: engine.BillingConfig{Period: time.Hour, Grace: 30 * time.Minute, Remind: []time.Duration{}, Tick: 5 * time.Millisecond}})
	env.Deposit(t, 42, 5000)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	c, err := client.New(env.URL, hangartest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	m := tui.New(tui.Options{Daemon: c, Context: t.Context(), Target: env.URL, Now: env.Clock.Now,
		Refresh: 100 * time.Millisecond, Frame: 10 * time.Millisecond, Width: 140, Height: 40})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 40))
	t.Cleanup(func() { _ = tm.Quit() })
	return bundle{tm: tm}, env, o
}

// An operator watching an order's detail sees its billing as it is: after the order
// is suspended for an unpaid period, the pane says when the server will be deleted.
// The pane was patched from live events with the status and a history line only, and
// never read again while open: it went on showing the paid time of before, with no
// "deleted at", however many refreshes passed.
func TestOrderDetailFollowsASuspension(t *testing.T) {
	b, env, o := realConsole(t)
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "1 of 1 shown")
	b.keys("enter")
	b.waitScreen(t, fmt.Sprintf("order #%d", o.ID), "paid until")

	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	s := env.WaitStatus(t, o.ID, store.OrderSuspended, 10*time.Second)
	if s.GraceUntil.IsZero() {
		t.Fatal("suspended without a grace")
	}
	b.waitScreen(t, "suspended")
	time.Sleep(time.Second) // ten of the console's refreshes
	grace := s.GraceUntil.UTC().Format("2006-01-02 15:04")
	out := b.finish(t)
	if !strings.Contains(out, "deleted at") || !strings.Contains(out, grace) {
		t.Fatalf("the detail of suspended order #%d lacks \"deleted at %s\" a second after the suspension:\n%s", o.ID, grace, out)
	}
}

// T terminates an order's server. A suspended order has one (powered off, kept for the
// grace), and the daemon's terminate deletes it; the console refused, saying only an
// active order has a server, so an operator could not end a suspended server that a
// user asked to be rid of before the grace ran out.
func TestTerminateASuspendedServer(t *testing.T) {
	b, env, o := realConsole(t)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	env.WaitStatus(t, o.ID, store.OrderSuspended, 10*time.Second)
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "1 of 1 shown", "suspended")
	b.keys("T")
	b.waitScreen(t, "(y/n)")
	b.keys("y")
	hangartest.WaitFor(t, 10*time.Second, "the suspended order's server to be deleted", func() bool {
		got, _ := env.Store.GetOrder(o.ID)
		return got.Status == store.OrderTerminated || got.Terminating
	})
	b.finish(t)
}
