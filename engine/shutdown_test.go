package engine_test

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// Once the engine begins stopping, no attempt starts: the one in flight is cut off and
// stays provisioning, the pending ones stay pending with no attempt spent, and orders
// are still accepted (stored for the next start) while the HTTP side drains.
func TestNoAttemptStartsOnceStopping(t *testing.T) {
	p := newScripted(nil)
	p.gate = make(chan struct{})
	env := setup(t, engine.QueueConfig{MaxConcurrency: 1}, p)
	first := env.Order(t, 42, "sim-nano", "tokyo")
	<-p.started
	pending := []int64{env.Order(t, 42, "sim-nano", "tokyo"), env.Order(t, 42, "sim-nano", "tokyo")}

	env.Engine.StopStarting()
	hangartest.WaitFor(t, 10*time.Second, "the cut-off attempt to report", func() bool { return queueStats(t, env).InFlight == 0 })
	pending = append(pending, env.Order(t, 42, "sim-nano", "tokyo")) // accepted while stopping
	// Dispatcher ticks every 5 ms here: a few dozen pass with room for an attempt.
	time.Sleep(200 * time.Millisecond)

	if n := len(p.createTimes()); n != 1 {
		t.Fatalf("%d provider calls, want only the one in flight when stopping began", n)
	}
	if o, _ := env.Store.GetOrder(first); o.Status != store.OrderProvisioning {
		t.Fatalf("the cut-off order is %s, want provisioning (resumed at the next start)", o.Status)
	}
	for _, id := range pending {
		if o, _ := env.Store.GetOrder(id); o.Status != store.OrderPending || o.Attempts != 0 {
			t.Fatalf("order %d is %s after %d attempts, want pending and none", id, o.Status, o.Attempts)
		}
	}
}

// At start, orders a stop or crash caught provisioning go before the pending queue,
// even before a pending order that is older by id and due as early.
func TestResumedOrdersStartBeforePendingOnes(t *testing.T) {
	p := newScripted(nil)
	p.gate = make(chan struct{})
	p.fail = func(n int) error {
		if n == 1 {
			return errPermanent
		}
		return nil
	}
	first := setup(t, engine.QueueConfig{MaxConcurrency: 1, MaxRetries: -1}, p)
	older := first.Order(t, 42, "sim-nano", "tokyo")
	<-p.started
	p.gate <- struct{}{} // let it through to its permanent failure: a dead letter
	first.WaitStatus(t, older, store.OrderFailed, 10*time.Second)
	resumed := first.Order(t, 42, "sim-nano", "tokyo")
	<-p.started // held at the gate: provisioning when the engine stops
	later := []int64{first.Order(t, 42, "sim-nano", "tokyo"), first.Order(t, 42, "sim-nano", "tokyo")}
	// Requeued now: pending, due now, and older than the order in flight.
	if r := first.Admin(t, http.MethodPost, "/admin/dlq/"+strconv.FormatInt(older, 10)+"/requeue", nil); r.Status != 200 {
		t.Fatalf("requeue: %d %s", r.Status, r.Body)
	}
	first.Stop() // the order at the gate stays provisioning

	next := newScripted(first.Clock)
	next.gate = make(chan struct{})
	env := hangartest.Start(t, hangartest.Options{Dir: first.Dir, Queue: engine.QueueConfig{MaxConcurrency: 1},
		Providers: map[string]engine.Provider{"sim": next}})
	want := []string{engine.InstanceLabel(resumed), engine.InstanceLabel(older)}
	for i, label := range want {
		select {
		case got := <-next.started:
			if got != label {
				t.Fatalf("start %d after the restart was %s, want %s (resumed first, then the pending queue by due time)", i+1, got, label)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("start %d after the restart never came", i+1)
		}
		next.gate <- struct{}{}
	}
	close(next.gate)
	for _, id := range append([]int64{resumed, older}, later...) {
		env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	}
}

// Stop stops every actor Start spawned: none of their tickers outlives the engine to
// message an actor over a closed store. The reconciler's and billing's four were left
// running (and kept the whole engine and store alive) in every process that stopped one.
func TestStopLeavesNoActorTicking(t *testing.T) {
	before := repeaters()
	env := hangartest.Start(t, hangartest.Options{})
	if n := repeaters() - before; n < 4 {
		t.Fatalf("%d tickers while running, want at least the reconciler's and billing's four", n)
	}
	env.Stop()
	hangartest.WaitFor(t, 5*time.Second, "every ticker to stop", func() bool { return repeaters() <= before })
}

// repeaters counts the goroutines of Hollywood's SendRepeat tickers.
func repeaters() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "actor.SendRepeater.start")
		}
		buf = make([]byte, 2*len(buf))
	}
}
