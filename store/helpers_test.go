package store

import (
	"context"
	"fmt"
	"io"
	"log/slog"
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
