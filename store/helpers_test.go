package store

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func quietOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

// settle waits until Badger holds every commit made so far.
func settle(t *testing.T, s *Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.db.Settle(ctx); err != nil {
		t.Fatalf("the applier did not take the commits: %v", err)
	}
}

// versions counts the versions Badger itself holds of key, tombstones included.
func versions(t *testing.T, s *Store, key string) int {
	t.Helper()
	n, err := s.db.Versions(key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// New orders and messages are marked born, so their short-lived index entries never
// reach Badger as a set and a tombstone.
func TestNewOrdersLeaveNoPendingTombstones(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if _, err := s.Deposit(7, 1_000_000); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	var ids []int64
	for i := range 5 {
		o, err := s.CreateOrder(Order{UserID: 7, TelegramUserID: 7, SpecID: "nano", Region: "tokyo", Provider: "sim", PricePaid: 100},
			OrderLimit{}, OutboxMessage{ChatID: 7, Text: fmt.Sprintf("order %d accepted", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateOrder(o.ID, func(o *Order) error { o.Status = OrderProvisioning; return nil }); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	queued, err := s.QueuedMessages(100)
	if err != nil || len(queued) != 5 {
		t.Fatalf("queued notes = %d, %v; want 5", len(queued), err)
	}
	var done []Finished
	for _, m := range queued {
		done = append(done, Finished{Message: m, Status: MessageSent})
	}
	if err := s.FinishMessages(done); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	for _, id := range ids {
		if n := versions(t, s, string(orderStatusKey(OrderPending, id))); n != 0 {
			t.Errorf("order %d: Badger holds %d versions of its pending-index entry, want none", id, n)
		}
	}
	for _, m := range queued {
		if n := versions(t, s, string(outboxDueKey(&m))); n != 0 {
			t.Errorf("message %d: Badger holds %d versions of its outbox entry, want none", m.ID, n)
		}
	}
	if n, err := s.CountOrders(OrderProvisioning); err != nil || n != 5 {
		t.Fatalf("provisioning orders = %d, %v; want 5", n, err)
	}
}

// An order's first time in a status writes a born index key: the first attempt's
// provisioning key, set and deleted between two applier batches, leaves Badger
// nothing, where it used to leave a tombstone an order.
func TestFirstProvisioningLeavesNoTombstone(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if _, err := s.Deposit(7, 1_000_000); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 5 {
		o, err := s.CreateOrder(Order{UserID: 7, TelegramUserID: 7, SpecID: "nano", Region: "tokyo", Provider: "sim", PricePaid: 100}, OrderLimit{})
		if err != nil {
			t.Fatal(err)
		}
		for _, status := range []string{OrderProvisioning, OrderActive} {
			if _, err := s.UpdateOrder(o.ID, func(o *Order) error { o.Status = status; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, o.ID)
	}
	settle(t, s)
	for _, id := range ids {
		if n := versions(t, s, string(orderStatusKey(OrderProvisioning, id))); n != 0 {
			t.Errorf("order %d: Badger holds %d versions of its provisioning-index entry, want none", id, n)
		}
	}
}

// Whatever path orders take through the statuses, and wherever the applier's batches
// fall, the status index lists exactly the orders in each status, before and after a
// restart: a key marked born that had a version (an order back in a status it had
// before, or one stored before its bits were kept) would leave a ghost entry behind.
func TestStatusIndexMatchesOrdersAfterRandomWalks(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if _, err := s.Deposit(7, 1<<40); err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var ids []int64
	for i := range 40 {
		o, err := s.CreateOrder(Order{UserID: 7, TelegramUserID: 7, SpecID: "nano", Region: "tokyo", Provider: "sim", PricePaid: 1}, OrderLimit{})
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 { // as stored before the bits were kept
			if err := s.update(func(txn *tx) error {
				o.indexed = 0
				return putRecord(txn, orderKey(o.ID), &o, 0)
			}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, o.ID)
	}
	// With every pending key in Badger, each order leaves pending and comes back and
	// leaves again within one batch: the second pending key must not be taken as born.
	settle(t, s)
	for _, id := range ids {
		for _, status := range []string{OrderProvisioning, OrderPending, OrderActive} {
			if _, err := s.UpdateOrder(id, func(o *Order) error { o.Status = status; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	walk := []string{OrderPending, OrderProvisioning, OrderActive, OrderSuspended, OrderProvisioning, OrderPending, OrderActive, OrderTerminated}
	for step := range 300 {
		id := ids[rnd.IntN(len(ids))]
		status := walk[rnd.IntN(len(walk))]
		if _, err := s.UpdateOrder(id, func(o *Order) error { o.Status = status; return nil }); err != nil {
			t.Fatal(err)
		}
		if step%37 == 0 {
			settle(t, s)
		}
	}
	check := func(s *Store) {
		t.Helper()
		for _, status := range OrderStatuses {
			var indexed []int64
			if err := s.OrdersWithStatus(status, func(o Order) error {
				if o.Status != status {
					t.Errorf("the %s index lists order %d, which is %s", status, o.ID, o.Status)
				}
				indexed = append(indexed, o.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var want []int64
			for _, id := range ids {
				o, err := s.GetOrder(id)
				if err != nil {
					t.Fatal(err)
				}
				if o.Status == status {
					want = append(want, id)
				}
			}
			if !slices.Equal(indexed, want) {
				t.Errorf("%s index = %v, want %v", status, indexed, want)
			}
		}
	}
	check(s)
	settle(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	check(s)
}
