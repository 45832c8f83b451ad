package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

const linodePrice = 7000 // linode-nano in the shipped catalogue

// linodeBilling runs hangar on the Linode fake, so that suspension and deletion are
// the real client's calls (POST …/shutdown, …/boot, DELETE) going through the queue.
func linodeBilling(t *testing.T) (*hangartest.Env, *linodefake.Server, int64) {
	t.Helper()
	return linodeBillingRetry(t, 20*time.Millisecond)
}

func linodeBillingRetry(t *testing.T, retryBase time.Duration) (*hangartest.Env, *linodefake.Server, int64) {
	t.Helper()
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	env := hangartest.Start(t, hangartest.Options{AdminChatID: billAdmin, Billing: billing,
		Queue:     engine.QueueConfig{MaxRetries: 2, Retry: engine.RetryPolicy{Base: retryBase}},
		Providers: map[string]engine.Provider{"linode": lin}})
	env.Deposit(t, billUser, linodePrice)
	id := env.Order(t, billUser, "linode-nano", "ap-northeast")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	return env, fake, id
}

// deadLetteredPowerOff runs an order on the Linode fake to the end of its paid
// period with no money for the next, and has the provider refuse every try of the
// power off that suspends it, until it is a dead letter the queue has counted.
func deadLetteredPowerOff(t *testing.T) (*hangartest.Env, *linodefake.Server, int64) {
	t.Helper()
	env, fake, id := linodeBilling(t)
	fake.FailNext(3, 503)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	advanceUntil(t, env, "the power off dead-lettered", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.DeadLettered
	})
	hangartest.WaitFor(t, 5*time.Second, "one dead letter counted", func() bool { return queueStats(t, env).DeadLetters == 1 })
	return env, fake, id
}

// advanceUntil moves the fake clock in small steps (retries are due on it) until
// cond holds.
func advanceUntil(t *testing.T, env *hangartest.Env, what string, cond func() bool) {
	t.Helper()
	hangartest.WaitFor(t, 15*time.Second, what, func() bool {
		if cond() {
			return true
		}
		env.Clock.Advance(10 * time.Millisecond)
		return false
	})
}

func offAtLinode(fake *linodefake.Server) bool {
	in := fake.Instances()
	return len(in) == 1 && in[0].Off
}

// A power off the provider refuses for a while is retried with backoff and done; a
// deposit powers the server back on; the delete at the end of the grace runs
// through the queue too.
func TestSuspensionRetriesProviderCalls(t *testing.T) {
	env, fake, id := linodeBilling(t)
	fake.FailNext(2, 503)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	advanceUntil(t, env, "the server off at Linode", func() bool { return offAtLinode(fake) })
	o = waitOrder(t, env, id, "power off recorded", func(o store.Order) bool { return o.PoweredOff && o.Op == "" })
	retries := 0
	for _, h := range o.History {
		if h.Event == "power_off_retry_scheduled" {
			retries++
		}
	}
	if o.Status != store.OrderSuspended || retries != 2 {
		t.Fatalf("%s after %d retries, want suspended after 2: %+v", o.Status, retries, o.History)
	}

	env.Deposit(t, billUser, linodePrice)
	advanceUntil(t, env, "the server on again", func() bool { return !offAtLinode(fake) && fake.Count() == 1 })
	o = waitOrder(t, env, id, "resumed", func(o store.Order) bool { return o.Status == store.OrderActive && !o.PoweredOff && o.Op == "" })

	// The grace runs from the suspension: suspended at the period's end, then deleted
	// a grace later.
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	waitOrder(t, env, id, "suspended again", func(o store.Order) bool { return o.Status == store.OrderSuspended })
	env.Clock.Advance(billing.Grace)
	advanceUntil(t, env, "deleted at Linode", func() bool { return fake.Count() == 0 })
	env.WaitStatus(t, id, store.OrderTerminated, 10*time.Second)
	var paths []string
	for _, r := range fake.Requests() {
		if r.Method == "POST" || r.Method == "DELETE" {
			paths = append(paths, r.Method+" "+r.Path[strings.LastIndex(r.Path, "/"):])
		}
	}
	t.Logf("provider calls: %v", paths)
}

// A power off that keeps failing goes to the dead letter list (the admin chat told),
// stays there while the order is suspended, and a requeue runs it again.
func TestSuspensionDeadLetterAndRequeue(t *testing.T) {
	env, fake, id := linodeBilling(t)
	fake.FailNext(3, 503) // MaxRetries 2: three failures are the last
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	advanceUntil(t, env, "the power off dead-lettered", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.DeadLettered
	})
	if o.Status != store.OrderSuspended || o.Op != store.OpPowerOff || offAtLinode(fake) {
		t.Fatalf("dead letter: %s op %q, off at Linode %v", o.Status, o.Op, offAtLinode(fake))
	}
	dead, _ := env.Engine.DeadLetters(10)
	if len(dead) != 1 || dead[0].ID != id {
		t.Fatalf("dead letters %+v", dead)
	}
	hangartest.WaitFor(t, 5*time.Second, "the admin chat told", func() bool {
		return len(messagesTo(env, billAdmin, "power_off of order")) == 1
	})
	if _, err := env.Engine.RequeueDeadLetter(id); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, env, "the server off after the requeue", func() bool { return offAtLinode(fake) })
	o = waitOrder(t, env, id, "power off recorded", func(o store.Order) bool { return o.PoweredOff && o.Op == "" && !o.DeadLettered })
}

// An operator terminating a suspended order queues its delete like the end of the
// grace does; the order is terminated once the provider confirms.
func TestTerminateSuspendedOrder(t *testing.T) {
	env, fake, id := linodeBilling(t)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	waitOrder(t, env, id, "suspended and off", func(o store.Order) bool { return o.PoweredOff && o.Op == "" })
	if _, err := env.Engine.TerminateOrder(id); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, env, "deleted at Linode", func() bool { return fake.Count() == 0 })
	o = env.WaitStatus(t, id, store.OrderTerminated, 10*time.Second)
	if o.Op != "" {
		t.Fatalf("terminated with %q still queued", o.Op)
	}
}

// A top-up while the power off waits for a long retry powers the server on at once:
// the power on replaces the power off in the queue instead of waiting behind its
// backoff (the test's clock does not move).
func TestTopUpDoesNotWaitBehindAFailingPowerOff(t *testing.T) {
	env, fake, id := linodeBillingRetry(t, time.Hour)
	fake.FailNext(1, 503)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
	waitOrder(t, env, id, "the power off waiting for its retry", func(o store.Order) bool {
		return o.Op == store.OpPowerOff && o.OpAttempts == 1
	})
	env.Deposit(t, billUser, linodePrice)
	o = waitOrder(t, env, id, "powered on without the clock moving", func(o store.Order) bool {
		return o.Status == store.OrderActive && o.Op == ""
	})
	if offAtLinode(fake) || o.PoweredOff {
		t.Fatalf("server off after the top-up: %+v", o.Billing)
	}
}

// A top-up while the power off is a dead letter takes the order off the list: the
// power on replaces it, and the queue's dead letter count follows.
func TestResumeReplacesADeadLetteredPowerOff(t *testing.T) {
	env, fake, id := deadLetteredPowerOff(t)
	env.Deposit(t, billUser, linodePrice)
	o := waitOrder(t, env, id, "resumed", func(o store.Order) bool { return o.Status == store.OrderActive && o.Op == "" })
	if o.DeadLettered || offAtLinode(fake) {
		t.Fatalf("after the top-up: dead-lettered %v, off %v", o.DeadLettered, offAtLinode(fake))
	}
	if dead, _ := env.Engine.DeadLetters(10); len(dead) != 0 {
		t.Fatalf("dead letters %v", dead)
	}
	hangartest.WaitFor(t, 5*time.Second, "no dead letter counted", func() bool { return queueStats(t, env).DeadLetters == 0 })
}
