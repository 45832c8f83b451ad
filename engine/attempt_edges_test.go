package engine_test

import (
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// edgeStore is the real store with two faults a test arms: a panic in the next
// UpdateOrders or UpdateOrderNotify, and a hook run right after an UpdateOrderNotify
// whose change recorded the event afterEvent, while the actor that made it has not yet
// reported to the dispatcher.
type edgeStore struct {
	engine.Store
	panicOrders, panicNotify atomic.Bool
	afterEvent               string
	after                    atomic.Pointer[func()]
}

func (s *edgeStore) UpdateOrders(changes []store.OrderChange) ([]store.OrderResult, error) {
	if s.panicOrders.Swap(false) {
		panic("a corrupt record")
	}
	return s.Store.UpdateOrders(changes)
}

func (s *edgeStore) UpdateOrderNotify(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, []store.OutboxMessage, error) {
	if s.panicNotify.Swap(false) {
		panic("a corrupt record")
	}
	o, queued, err := s.Store.UpdateOrderNotify(id, fn, notes...)
	if n := len(o.History); err == nil && n > 0 && o.History[n-1].Event == s.afterEvent {
		if f := s.after.Swap(nil); f != nil {
			(*f)()
		}
	}
	return o, queued, err
}

// An operation queued while another of the same order's is in flight (after that
// attempt recorded its outcome, before it reported) runs once the attempt has
// reported; the dead letter count follows what the store holds. Dropped, a
// termination of a suspended server would never delete it before a restart, and a
// dead letter replaced by the termination would be counted for good.
func TestOperationQueuedWhileAnotherReportsRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		// the power off's outcome recorded before the termination is asked
		event       string
		failPowerOn int
	}{
		{"after a power off done", "power_off_done", 0},
		{"after a power off dead-lettered", "power_off_dead_lettered", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edges := &edgeStore{afterEvent: tc.event}
			fake := linodefake.New("tok", fakeapi.WithBootDelay(0))
			t.Cleanup(fake.Close)
			lin, err := cloud.NewLinode("tok", fake.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			env := hangartest.Start(t, hangartest.Options{AdminChatID: billAdmin, Billing: billing,
				Queue:     engine.QueueConfig{MaxRetries: 2, Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
				Providers: map[string]engine.Provider{"linode": lin},
				WrapStore: func(s engine.Store) engine.Store { edges.Store = s; return edges }})
			env.Deposit(t, billUser, linodePrice)
			id := env.Order(t, billUser, "linode-nano", "ap-northeast")
			o := env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
			terminate := func() {
				if _, err := env.Engine.TerminateOrder(id); err != nil {
					t.Errorf("terminate: %v", err)
				}
				// The dispatcher has handled the delete's enqueue before the power
				// off's actor goes on to report.
				if _, err := env.Engine.QueueStats(); err != nil {
					t.Errorf("queue stats: %v", err)
				}
			}
			edges.after.Store(&terminate)
			fake.FailNext(tc.failPowerOn, 503)
			env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now()))
			advanceUntil(t, env, "the server deleted at Linode", func() bool { return fake.Count() == 0 })
			o = env.WaitStatus(t, id, store.OrderTerminated, 10*time.Second)
			if edges.after.Load() != nil {
				t.Fatal("the termination was never asked: the test did not reach its window")
			}
			dead, err := env.Engine.DeadLetters(10)
			if err != nil {
				t.Fatal(err)
			}
			hangartest.WaitFor(t, 5*time.Second, "the queue to settle", func() bool {
				s := queueStats(t, env)
				return s.InFlight == 0 && s.Depth == 0
			})
			if s := queueStats(t, env); o.Op != "" || s.DeadLetters != len(dead) {
				t.Fatalf("terminated with op %q; dead letters counted %d, stored %d", o.Op, s.DeadLetters, len(dead))
			}
		})
	}
}

// A start commit that panics loses no order: its orders go back on the queue, as
// after a refused commit, and start once the retry base has passed.
func TestPanickingStartCommitRequeuesTheOrders(t *testing.T) {
	edges := &edgeStore{}
	edges.panicOrders.Store(true)
	p := newScripted(nil)
	env := hangartest.Start(t, hangartest.Options{Providers: map[string]engine.Provider{"sim": p},
		WrapStore: func(s engine.Store) engine.Store { edges.Store = s; return edges }})
	p.clock = env.Clock
	env.Deposit(t, 42, 1_000_000)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	hangartest.WaitFor(t, 5*time.Second, "the panicking start commit", func() bool { return !edges.panicOrders.Load() })
	if s := queueStats(t, env); s.Depth+s.InFlight != 1 {
		t.Fatalf("after the panicking start commit: depth %d, in flight %d; want the order on the queue", s.Depth, s.InFlight)
	}
	advanceUntil(t, env, "the order active", func() bool {
		o, _ := env.Store.GetOrder(id)
		return o.Status == store.OrderActive
	})
	if o, _ := env.Store.GetOrder(id); o.Attempts != 1 || len(p.createTimes()) != 1 {
		t.Fatalf("active after %d attempts and %d creates, want 1 and 1", o.Attempts, len(p.createTimes()))
	}
	if !strings.Contains(env.Logs.String(), "internal error in the start commit") {
		t.Error("the panicking start commit was not logged")
	}
}

// A panic in an order attempt outside the provider call (here, recording its dead
// letter) is recovered: the process lives, the attempt is retried and ends as it
// should. Hollywood v1.0.5 turns such a panic in an actor spawned without restarts
// into a second one that kills the process, so the stack runs in a child process and
// the parent reports how it ended.
func TestPanicRecordingAnAttemptIsRetried(t *testing.T) {
	if os.Getenv("HANGAR_TEST_ATTEMPT_PANIC") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPanicRecordingAnAttemptIsRetried$", "-test.v")
		cmd.Env = append(os.Environ(), "HANGAR_TEST_ATTEMPT_PANIC=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the stack under test did not survive the panic (%v):\n%s", err, tail(out, 3000))
		}
		if !strings.Contains(string(out), "--- PASS: TestPanicRecordingAnAttemptIsRetried") {
			t.Fatalf("the child did not run the test:\n%s", tail(out, 3000))
		}
		return
	}
	edges := &edgeStore{}
	p := newScripted(nil)
	p.fail = func(int) error { return errPermanent }
	env := hangartest.Start(t, hangartest.Options{Providers: map[string]engine.Provider{"sim": p},
		WrapStore: func(s engine.Store) engine.Store { edges.Store = s; return edges }})
	p.clock = env.Clock
	env.Deposit(t, 42, 1_000_000)
	edges.panicNotify.Store(true) // the dead-letter commit of orderActor.fail
	id := env.Order(t, 42, "sim-nano", "tokyo")
	var o store.Order
	advanceUntil(t, env, "the order dead-lettered on its retry", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderFailed
	})
	if !o.DeadLettered || edges.panicNotify.Load() {
		t.Fatalf("order %s, dead-lettered %v, panic armed %v", o.Status, o.DeadLettered, edges.panicNotify.Load())
	}
	hangartest.WaitFor(t, 5*time.Second, "the queue to settle", func() bool {
		s := queueStats(t, env)
		return s.InFlight == 0 && s.DeadLetters == 1
	})
	if !strings.Contains(env.Logs.String(), "actor handler panicked; its attempt is retried") {
		t.Error("the panic was not logged")
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Purging a dead-lettered provider operation drops it from its order. Left there, it
// waited unseen while hangar ran and ran at the next start, which rebuilds the queue
// from every order with an operation: a purged power off (or delete) hit the server
// after a restart.
func TestPurgedOperationDoesNotRunAfterARestart(t *testing.T) {
	env, fake, id := deadLetteredPowerOff(t)
	if n, err := env.Engine.PurgeDeadLetters(); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if o, _ := env.Store.GetOrder(id); o.Op != "" || o.DeadLettered || o.Status != store.OrderSuspended {
		t.Fatalf("after the purge: %s, op %q, dead-lettered %v; want suspended with nothing queued", o.Status, o.Op, o.DeadLettered)
	}
	stoppedAt := env.Clock.Now()
	env.Stop()

	lin, err := cloud.NewLinode("tok", fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	again := hangartest.Start(t, hangartest.Options{Dir: env.Dir, AdminChatID: billAdmin, Billing: billing,
		Queue:     engine.QueueConfig{MaxRetries: 2, Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin}})
	if d := stoppedAt.Sub(again.Clock.Now()); d > 0 {
		again.Clock.Advance(d)
	}
	for range 50 { // a second of retries on the clock
		again.Clock.Advance(20 * time.Millisecond)
		time.Sleep(2 * time.Millisecond)
	}
	if s := queueStats(t, again); s.Depth != 0 || s.InFlight != 0 || offAtLinode(fake) {
		t.Fatalf("after a restart: depth %d, in flight %d, server off %v; the purged power off ran", s.Depth, s.InFlight, offAtLinode(fake))
	}
}
