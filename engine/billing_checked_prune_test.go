package engine

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// activeStore answers the active orders it holds to the rescan.
type activeStore struct {
	watchStore
	active []store.Order
}

func (s *activeStore) OrdersWithStatus(status string, fn func(store.Order) error) error {
	if status != store.OrderActive {
		return nil
	}
	for _, o := range s.active {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// A reminder found not needed is remembered per order until its period ends; an order
// ended outside billing (terminated from the console) is never scheduled again, and
// the rescan forgets it instead of keeping its entry for the daemon's life.
func TestBillingRescanForgetsOrdersNoLongerActive(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{Clock: &watchClock{now: now}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Billing: BillingConfig{Period: 30 * 24 * time.Hour, Remind: []time.Duration{72 * time.Hour}}}
	cfg.Billing.setDefaults()
	kept := store.Order{ID: 7, Status: store.OrderActive, PricePaid: 100}
	kept.PaidUntil = now.Add(48 * time.Hour)
	st := &activeStore{active: []store.Order{kept}}
	b := newBillingActor(billingDeps{cfg: cfg, store: st})().(*billingActor)
	b.checked[kept.ID] = checkedReminders{until: kept.PaidUntil, n: 1}
	b.checked[5] = checkedReminders{until: now.Add(time.Hour), n: 1} // terminated meanwhile

	b.rescan()

	if _, ok := b.checked[5]; ok {
		t.Errorf("the rescan kept the checked reminders of order 5, which is no longer active: %v", b.checked)
	}
	if c, ok := b.checked[kept.ID]; !ok || c.n != 1 {
		t.Errorf("the rescan dropped the checked reminders of active order %d: %v", kept.ID, b.checked)
	}
	if at, ok := b.next[kept.ID]; !ok || !at.Equal(kept.PaidUntil) {
		t.Errorf("active order %d due at %v (scheduled %v), want its period's end %v, its reminder checked", kept.ID, at, ok, kept.PaidUntil)
	}
}
