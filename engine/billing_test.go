package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

const (
	billUser  = 42
	billAdmin = 999
	simPrice  = 5000 // sim-nano in the shipped catalogue
)

var billing = engine.BillingConfig{Period: time.Hour, Grace: 30 * time.Minute,
	Remind: []time.Duration{20 * time.Minute, 5 * time.Minute}, Tick: 5 * time.Millisecond}

// billSetup starts hangar on the simulator (which keeps servers' power) with a
// fake clock the test moves across periods.
func billSetup(t *testing.T, deposit int64) (*hangartest.Env, *cloud.Sim) {
	t.Helper()
	sim := cloud.NewSim(cloud.SimConfig{Rand: rand.New(rand.NewPCG(1, 1))})
	env := hangartest.Start(t, hangartest.Options{AdminChatID: billAdmin, Billing: billing,
		Providers: map[string]engine.Provider{"sim": sim}})
	env.Deposit(t, billUser, deposit)
	return env, sim
}

// ledgerAgrees checks that the balance is what the ledger's entries add up to, and
// that it is want.
func ledgerAgrees(t *testing.T, env *hangartest.Env, want int64) []store.LedgerEntry {
	t.Helper()
	b, err := env.Store.GetBalance(billUser)
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := env.Store.Ledger(billUser, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var avail, held int64
	for _, e := range ledger {
		switch e.Kind {
		case store.LedgerDeposit:
			avail += e.Amount
		case store.LedgerHold:
			avail, held = avail-e.Amount, held+e.Amount
		case store.LedgerCapture:
			held -= e.Amount
		case store.LedgerRelease:
			avail, held = avail+e.Amount, held-e.Amount
		case store.LedgerRenewal:
			avail -= e.Amount
		}
		if e.Available != avail || e.Held != held {
			t.Fatalf("ledger entry %d (%s) says %d/%d, the entries add up to %d/%d", e.Seq, e.Kind, e.Available, e.Held, avail, held)
		}
	}
	if b.Available != avail || b.Held != held || b.Available != want {
		t.Fatalf("balance %d available, %d held; the ledger adds up to %d/%d; want %d available", b.Available, b.Held, avail, held, want)
	}
	return ledger
}

func renewals(ledger []store.LedgerEntry, order int64) []string {
	var out []string
	for _, e := range ledger {
		if e.Kind == store.LedgerRenewal && e.OrderID == order {
			out = append(out, e.Note)
		}
	}
	return out
}

// waitOrder waits until cond holds of the stored order.
func waitOrder(t *testing.T, env *hangartest.Env, id int64, what string, cond func(o store.Order) bool) store.Order {
	t.Helper()
	var o store.Order
	hangartest.WaitFor(t, 10*time.Second, what, func() bool {
		var err error
		o, err = env.Store.GetOrder(id)
		return err == nil && cond(o)
	})
	return o
}

func simStatus(t *testing.T, sim *cloud.Sim, id string) string {
	t.Helper()
	in, err := sim.Get(context.Background(), id)
	if err != nil {
		return "gone"
	}
	return in.Status
}

// messagesTo returns the texts sent to chat that contain sub.
func messagesTo(env *hangartest.Env, chat int64, sub string) []string {
	var out []string
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == chat && strings.Contains(m.Text, sub) {
			out = append(out, m.Text)
		}
	}
	return out
}

// Issue 17's story on the simulator: money for two and a half periods pays the
// first period (the captured hold) and one renewal; the next end finds half a
// period's money, so the user is reminded (once per reminder) with the amount
// missing, then the server is suspended and powered off; a top-up in the grace
// renews it and powers it on; the next unpaid end suspends it again and the end of
// the grace deletes it. The balance agrees with the ledger at every step and each
// period is charged once.
func TestBillingRenewRemindSuspendResumeTerminate(t *testing.T) {
	env, sim := billSetup(t, simPrice*5/2)
	id := env.Order(t, billUser, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	if o.Period != 1 || !o.PaidUntil.Equal(env.Clock.Now().Add(time.Hour)) && o.PaidUntil.Sub(env.Clock.Now()) > time.Hour {
		t.Fatalf("active order: period %d, paid until %v (now %v)", o.Period, o.PaidUntil, env.Clock.Now())
	}
	ledgerAgrees(t, env, simPrice*3/2)

	// The first reminder's time passes with enough money: nothing is sent.
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()) - 19*time.Minute)
	time.Sleep(50 * time.Millisecond)
	if got := messagesTo(env, billUser, "missing"); len(got) != 0 {
		t.Fatalf("reminded with enough money: %q", got)
	}

	// The period ends: renewed from the balance, once.
	env.Clock.Advance(20 * time.Minute)
	o = waitOrder(t, env, id, "the first renewal", func(o store.Order) bool { return o.Period == 2 })
	if o.Status != store.OrderActive || !o.PaidUntil.After(env.Clock.Now()) {
		t.Fatalf("after renewal: %s, paid until %v", o.Status, o.PaidUntil)
	}
	ledger := ledgerAgrees(t, env, simPrice/2)
	if got := renewals(ledger, id); len(got) != 1 || got[0] != "period 2" {
		t.Fatalf("renewal entries %q, want one for period 2", got)
	}

	// Reminders: half the price is missing, each reminder goes once.
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()) - 20*time.Minute)
	waitOrder(t, env, id, "the first reminder", func(o store.Order) bool { return o.Reminded == 1 })
	env.Clock.Advance(time.Minute)
	time.Sleep(50 * time.Millisecond)
	env.Clock.Advance(14 * time.Minute)
	waitOrder(t, env, id, "the second reminder", func(o store.Order) bool { return o.Reminded == 2 })
	if _, ok := env.Telegram.WaitMessages(3, 5*time.Second); !ok {
		t.Fatal("messages not sent")
	}
	hangartest.WaitFor(t, 5*time.Second, "two reminders sent", func() bool { return len(messagesTo(env, billUser, "KRW 2,500 missing")) == 2 })

	// The period ends unpaid: suspended, powered off, nothing charged.
	env.Clock.Advance(5 * time.Minute)
	o = waitOrder(t, env, id, "suspension and power off", func(o store.Order) bool {
		return o.Status == store.OrderSuspended && o.PoweredOff && o.Op == ""
	})
	if st := simStatus(t, sim, o.InstanceID); st != "offline" {
		t.Fatalf("suspended server is %q at the provider, want offline", st)
	}
	if !o.GraceUntil.Equal(o.PaidUntil.Add(billing.Grace)) {
		t.Errorf("grace until %v, want %v", o.GraceUntil, o.PaidUntil.Add(billing.Grace))
	}
	ledgerAgrees(t, env, simPrice/2)
	hangartest.WaitFor(t, 5*time.Second, "user and admin told of the suspension", func() bool {
		return len(messagesTo(env, billUser, "suspended")) == 1 && len(messagesTo(env, billAdmin, "suspended")) == 1
	})

	// A top-up during the grace renews it and powers it back on.
	env.Clock.Advance(10 * time.Minute)
	env.Deposit(t, billUser, simPrice/2)
	o = waitOrder(t, env, id, "resumed and powered on", func(o store.Order) bool {
		return o.Status == store.OrderActive && o.Period == 3 && !o.PoweredOff && o.Op == ""
	})
	if st := simStatus(t, sim, o.InstanceID); st != "running" {
		t.Fatalf("resumed server is %q at the provider, want running", st)
	}
	if !o.PaidUntil.Equal(env.Clock.Now().Add(time.Hour)) {
		t.Errorf("resumed: paid until %v, want a period from the top-up (%v)", o.PaidUntil, env.Clock.Now().Add(time.Hour))
	}
	ledger = ledgerAgrees(t, env, 0)
	if got := renewals(ledger, id); len(got) != 2 || got[1] != "period 3" {
		t.Fatalf("renewal entries %q, want periods 2 and 3", got)
	}

	// Unpaid again: suspended, and deleted when the grace ends.
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	o = waitOrder(t, env, id, "the second suspension", func(o store.Order) bool { return o.Status == store.OrderSuspended && o.PoweredOff })
	env.Clock.Advance(billing.Grace)
	o = env.WaitStatus(t, id, store.OrderTerminated, 10*time.Second)
	if st := simStatus(t, sim, o.InstanceID); st != "gone" {
		t.Fatalf("terminated server is %q at the provider", st)
	}
	ledger = ledgerAgrees(t, env, 0)
	if got := renewals(ledger, id); len(got) != 2 {
		t.Fatalf("renewal entries %q after termination, want 2", got)
	}
	var events []string
	for _, h := range o.History {
		events = append(events, h.Event)
	}
	for _, want := range []string{"succeeded", "renewed", "reminded", "suspended", "power_off_done", "resumed", "power_on_done", "grace_ended", "terminated"} {
		if !strings.Contains(" "+strings.Join(events, " ")+" ", " "+want+" ") {
			t.Errorf("history %v lacks %q", events, want)
		}
	}
	hangartest.WaitFor(t, 5*time.Second, "user told of the deletion", func() bool { return len(messagesTo(env, billUser, "was deleted")) == 1 })
	for step, want := range map[string]float64{"renewed": 1, "reminded": 2, "suspended": 2, "resumed": 1, "grace_ended": 1} {
		if got := env.Metric(t, `hangar_billing_steps_total{step="`+step+`"}`); got != want {
			t.Errorf("hangar_billing_steps_total{step=%q} = %v, want %v", step, got, want)
		}
	}
}

// With auto-renew off the server ends with its paid period: no renewal, no
// reminder, no grace. /renew pays a period ahead; the bot's commands work.
func TestAutoRenewOffEndsWithThePaidPeriod(t *testing.T) {
	env, sim := billSetup(t, simPrice*4)
	id := env.Order(t, billUser, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)

	env.PostUpdate(t, hangartest.Update(1, billUser, fmt.Sprintf("/renew %d", id)))
	o = waitOrder(t, env, id, "renewed ahead", func(o store.Order) bool { return o.Period == 2 })
	ledgerAgrees(t, env, simPrice*2)
	env.PostUpdate(t, hangartest.Update(2, billUser, fmt.Sprintf("/autorenew %d off", id)))
	o = waitOrder(t, env, id, "auto-renew off", func(o store.Order) bool { return o.AutoRenewOff })

	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()) - time.Second)
	time.Sleep(50 * time.Millisecond)
	if o, _ := env.Store.GetOrder(id); o.Status != store.OrderActive || o.Period != 2 {
		t.Fatalf("before its end: %s, period %d", o.Status, o.Period)
	}
	env.Clock.Advance(time.Second)
	o = env.WaitStatus(t, id, store.OrderTerminated, 10*time.Second)
	if sim.Count() != 0 {
		t.Fatalf("%d servers left at the provider", sim.Count())
	}
	ledger := ledgerAgrees(t, env, simPrice*2)
	if got := renewals(ledger, id); len(got) != 1 {
		t.Fatalf("renewal entries %q, want only the /renew", got)
	}
	if got := messagesTo(env, billUser, "missing"); len(got) != 0 {
		t.Errorf("reminded with auto-renew off: %q", got)
	}
	hangartest.WaitFor(t, 5*time.Second, "the replies", func() bool {
		return len(messagesTo(env, billUser, "renewed")) >= 1 && len(messagesTo(env, billUser, "Auto-renew is <b>off</b>")) == 1
	})
}

// poisonBalance panics reading one user's balance, as a corrupt record might.
type poisonBalance struct {
	engine.Store
	user int64
}

func (p poisonBalance) GetBalance(user int64) (store.Balance, error) {
	if user == p.user {
		panic("poisoned balance")
	}
	return p.Store.GetBalance(user)
}

// A billing step that panics (here: reading one user's balance) is recovered and
// counted: the daemon stays up and the other users' servers still renew.
func TestBillingSurvivesAPoisonedOrder(t *testing.T) {
	const poisoned, healthy = 61, 62
	env := hangartest.Start(t, hangartest.Options{Billing: billing,
		WrapStore: func(s engine.Store) engine.Store { return poisonBalance{Store: s, user: poisoned} }})
	env.Deposit(t, poisoned, simPrice)
	env.Deposit(t, healthy, simPrice*2)
	bad := env.Order(t, poisoned, "sim-nano", "tokyo")
	good := env.Order(t, healthy, "sim-nano", "tokyo")
	env.WaitStatus(t, bad, store.OrderActive, 10*time.Second)
	o := env.WaitStatus(t, good, store.OrderActive, 10*time.Second)
	// The poisoned user's reminder reads the balance; it panics on every look.
	for range 5 {
		env.Clock.Advance(10 * time.Minute)
		time.Sleep(20 * time.Millisecond)
	}
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	waitOrder(t, env, good, "the healthy order renewed", func(o store.Order) bool { return o.Period == 2 })
	if n := env.Metric(t, `hangar_actor_panics_total{kind="billing"}`); n < 1 {
		t.Fatalf("billing panics counted: %v", n)
	}
	if _, err := env.Engine.Health(context.Background()); err != nil {
		t.Fatalf("engine unhealthy after the panics: %v", err)
	}
	if o, _ := env.Store.GetOrder(bad); o.Status != store.OrderActive || o.Period != 1 {
		t.Fatalf("poisoned order moved: %s period %d", o.Status, o.Period)
	}
}
