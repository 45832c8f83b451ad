package store

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

// A change's sealed password is written in the change's own commit, and only when
// the change is: a refused change keeps nothing.
func TestUpdateOrdersSealsInTheSameCommit(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if _, err := s.Deposit(7, 1_000_000); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 2 {
		o, err := s.CreateOrder(Order{UserID: 7, TelegramUserID: 7, Provider: "sim", SpecID: "sim-nano", Region: "tokyo", PricePaid: 100}, OrderLimit{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	errRefused := errors.New("refused")
	start := func(o *Order) error {
		o.Status = OrderProvisioning
		o.Attempts++
		o.Record(time.Now(), "started", "")
		return nil
	}
	seal := func(o *Order) (SealedPassword, bool) {
		if o.Status != OrderProvisioning {
			t.Errorf("sealing an order Apply did not change: %+v", o)
		}
		return SealedPassword{Epoch: 9, Sealed: []byte("sealed")}, true
	}
	before := s.LogStats().Commits
	res, err := s.UpdateOrders([]OrderChange{
		{ID: ids[0], Apply: start, Seal: seal},
		{ID: ids[1], Apply: func(*Order) error { return errRefused }, Seal: seal},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.LogStats().Commits - before; got != 1 {
		t.Errorf("%d commits, want 1", got)
	}
	if res[0].Err != nil || !errors.Is(res[1].Err, errRefused) {
		t.Fatalf("results %+v", res)
	}
	p, err := s.GetSealedPassword(ids[0])
	if err != nil || p.OrderID != ids[0] || p.Epoch != 9 || string(p.Sealed) != "sealed" {
		t.Fatalf("sealed password of the started order: %+v, %v", p, err)
	}
	if _, err := s.GetSealedPassword(ids[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused order has a sealed password: %v", err)
	}
}

// Recording a password's message as sent starts the password's /password window in
// the same commit; the first time counts, and a message whose order kept no password
// (derived passwords) changes nothing else.
func TestFinishingAPasswordMessageStartsItsWindow(t *testing.T) {
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s, err := Open(Options{Dir: t.TempDir(), SyncWrites: true, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutSealedPassword(SealedPassword{OrderID: 5, Epoch: 1, Sealed: []byte{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	finish := func(orderID int64) {
		t.Helper()
		if err := s.FinishMessages([]Finished{
			{Message: OutboxMessage{ID: 1, ChatID: 7, Text: "a notice"}, Status: MessageSent},
			{Message: OutboxMessage{ID: 2, ChatID: 7, SecretOrderID: orderID}, Status: MessageSent},
		}); err != nil {
			t.Fatal(err)
		}
	}
	finish(5)
	sent := clock
	clock = clock.Add(time.Minute)
	finish(5) // sent again after a crash re-sent it: the window still starts at the first
	finish(6) // no password kept for order 6
	p, err := s.GetSealedPassword(5)
	if err != nil || !p.DoneAt.Equal(sent) {
		t.Fatalf("sealed password of order 5: done at %v, %v; want %v", p.DoneAt, err, sent)
	}
	if _, err := s.GetSealedPassword(6); !errors.Is(err, ErrNotFound) {
		t.Fatalf("order 6 has a sealed password after its message finished: %v", err)
	}
}
