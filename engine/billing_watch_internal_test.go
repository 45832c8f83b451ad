package engine

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/store"
)

type watchClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *watchClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *watchClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// watchStore has no active orders to scan and records which orders are read and
// how many ticks looked at the suspended ones.
type watchStore struct {
	mu    sync.Mutex
	reads []int64
	ticks int
}

func (s *watchStore) GetOrder(id int64) (store.Order, error) {
	s.mu.Lock()
	s.reads = append(s.reads, id)
	s.mu.Unlock()
	return store.Order{}, store.ErrNotFound
}

func (s *watchStore) UpdateOrderNotify(int64, func(*store.Order) error, ...store.OutboxMessage) (store.Order, []store.OutboxMessage, error) {
	panic("billing committed a change to an order it only had to schedule")
}

func (s *watchStore) OrdersWithStatus(status string, _ func(store.Order) error) error {
	if status == store.OrderSuspended {
		s.mu.Lock()
		s.ticks++
		s.mu.Unlock()
	}
	return nil
}

func (s *watchStore) GetBalance(int64) (store.Balance, error) { return store.Balance{}, nil }

func (s *watchStore) UserOrders(int64, int) ([]store.Order, error) { return nil, nil }

func (s *watchStore) state() ([]int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.reads...), s.ticks
}

// The billing actor schedules an order that just became active from the order the
// completer's commit left, with no read of it: the order is read first at its due
// time (here its period's end, no reminders), and not before.
func TestBillingSchedulesAWatchedOrderWithoutReadingIt(t *testing.T) {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := &watchClock{now: start}
	st := &watchStore{}
	cfg := Config{Clock: clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Billing: BillingConfig{Period: time.Hour, Remind: []time.Duration{}, Tick: 5 * time.Millisecond}}
	cfg.Billing.setDefaults()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	pid := e.Spawn(newBillingActor(billingDeps{ctx: context.Background(), cfg: cfg, store: st,
		metrics: newMetrics(nil), steps: newBillingSteps(nil)}), billingKind, actor.WithID(billingID))
	t.Cleanup(func() { <-e.Poison(pid).Done() })

	o := store.Order{ID: 77, Status: store.OrderActive, Billing: store.Billing{Period: 1, PaidUntil: start.Add(time.Hour)}}
	e.Send(pid, watchOrder{order: &o})
	waitTicks := func(n int) {
		t.Helper()
		_, from := st.state()
		deadline := time.Now().Add(10 * time.Second)
		for _, ticks := st.state(); ticks < from+n; _, ticks = st.state() {
			if time.Now().After(deadline) {
				t.Fatalf("billing did not tick %d times", n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitTicks(3) // ticks sent after watchOrder are handled after it
	if reads, _ := st.state(); len(reads) != 0 {
		t.Fatalf("billing read orders %v before any was due", reads)
	}
	clock.set(start.Add(time.Hour - time.Second))
	waitTicks(3)
	if reads, _ := st.state(); len(reads) != 0 {
		t.Fatalf("billing read orders %v before the period's end", reads)
	}
	clock.set(start.Add(time.Hour))
	deadline := time.Now().Add(10 * time.Second)
	for reads, _ := st.state(); len(reads) == 0; reads, _ = st.state() {
		if time.Now().After(deadline) {
			t.Fatal("the watched order was not looked at when its period ended: it was not scheduled")
		}
		time.Sleep(time.Millisecond)
	}
	if reads, _ := st.state(); reads[0] != o.ID {
		t.Fatalf("billing read %v, want order %d", reads, o.ID)
	}
}

// A step's next due time counts from when billing decided on the order, not from
// when the schedule runs: a renewal committed at the period's end whose schedule runs
// only after the new period's first reminder came due (a slow actor, a clock that
// jumped meanwhile) still sends that reminder instead of skipping to the second.
func TestBillingScheduleCountsFromTheDecision(t *testing.T) {
	periodEnd := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	renewed := store.Order{ID: 5, Status: store.OrderActive,
		Billing: store.Billing{Period: 2, PaidUntil: periodEnd.Add(time.Hour)}}
	remind := []time.Duration{20 * time.Minute, 5 * time.Minute}
	cases := []struct {
		name     string
		reminded int
		decided  time.Time
		want     time.Time
	}{
		{"decided at the period's end", 0, periodEnd, renewed.PaidUntil.Add(-20 * time.Minute)},
		// An unsent reminder whose time has passed is looked at at once, not skipped.
		{"decided after the first reminder's time, unsent", 0, renewed.PaidUntil.Add(-19 * time.Minute), renewed.PaidUntil.Add(-19 * time.Minute)},
		{"decided after the first reminder's time, sent", 1, renewed.PaidUntil.Add(-19 * time.Minute), renewed.PaidUntil.Add(-5 * time.Minute)},
		{"decided after both reminders' times, both sent", 2, renewed.PaidUntil.Add(-time.Minute), renewed.PaidUntil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The clock has moved on past the first reminder whatever was decided.
			clock := &watchClock{now: renewed.PaidUntil.Add(-19 * time.Minute)}
			cfg := Config{Clock: clock, Billing: BillingConfig{Period: time.Hour, Remind: remind}}
			cfg.Billing.setDefaults()
			b := &billingActor{d: billingDeps{cfg: cfg}, next: map[int64]time.Time{}}
			o := renewed
			o.Reminded = tc.reminded
			b.schedule(o, tc.decided)
			if got := b.next[renewed.ID]; !got.Equal(tc.want) {
				t.Fatalf("next due %v, want %v", got, tc.want)
			}
		})
	}
}
