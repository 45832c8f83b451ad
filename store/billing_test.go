package store

import (
	"errors"
	"testing"
	"time"
)

// activeOrder makes an order of price for user 7 and makes it active with its first
// period paid, as the order actor does.
func activeOrder(t *testing.T, s *Store, price int64) Order {
	t.Helper()
	o, err := s.CreateOrder(Order{TelegramUserID: 7, SpecID: "s", Region: "r", Provider: "sim", PricePaid: price}, OrderLimit{})
	if err != nil {
		t.Fatal(err)
	}
	o, err = s.UpdateOrder(o.ID, func(o *Order) error {
		o.Status, o.Period, o.PaidUntil = OrderActive, 1, time.Now().Add(time.Hour)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A renewal is the order's move to the next period, charged in the same commit and
// keyed by order and period: the same move applied again (a restart that read the
// order before the renewal) is refused by its own check, and a second charge for
// a period already paid is refused by the key even if the check were wrong.
func TestRenewalChargesEachPeriodOnce(t *testing.T) {
	tests := []struct {
		name    string
		deposit int64
		renew   []int // the periods renewals move to, in order
		wantErr []error
		paid    int   // periods renewed in the end
		avail   int64 // available balance in the end
	}{
		{name: "two periods", deposit: 400, renew: []int{2, 3}, wantErr: []error{nil, nil}, paid: 3, avail: 100},
		{name: "a period twice", deposit: 400, renew: []int{2, 2}, wantErr: []error{nil, errStale}, paid: 2, avail: 200},
		{name: "not enough", deposit: 250, renew: []int{2, 3}, wantErr: []error{nil, ErrInsufficientFunds}, paid: 2, avail: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := quietOpen(t, t.TempDir())
			if _, err := s.Deposit(7, tt.deposit); err != nil {
				t.Fatal(err)
			}
			o := activeOrder(t, s, 100)
			for i, p := range tt.renew {
				_, err := s.UpdateOrder(o.ID, func(o *Order) error {
					if o.Period != p-1 {
						return errStale
					}
					o.Period = p
					return nil
				})
				if !errors.Is(err, tt.wantErr[i]) {
					t.Fatalf("renewal to period %d: %v, want %v", p, err, tt.wantErr[i])
				}
			}
			got, _ := s.GetOrder(o.ID)
			if got.Period != tt.paid {
				t.Errorf("period %d, want %d", got.Period, tt.paid)
			}
			b, _ := s.GetBalance(7)
			if b.Available != tt.avail || b.Held != 0 {
				t.Errorf("balance %+v, want %d available", b, tt.avail)
			}
			renewals := 0
			ledger, _ := s.Ledger(7, 100)
			for _, e := range ledger {
				if e.Kind == LedgerRenewal {
					renewals++
					if e.OrderID != o.ID {
						t.Errorf("renewal entry for order %d", e.OrderID)
					}
				}
			}
			if renewals != tt.paid-1 {
				t.Errorf("%d renewal entries, want %d: %+v", renewals, tt.paid-1, ledger)
			}
			for p := 2; p <= tt.paid; p++ {
				if _, ok, err := s.Renewed(o.ID, p); err != nil || !ok {
					t.Errorf("period %d not recorded as renewed: %v", p, err)
				}
			}
			// Forcing the same period again past the check still charges nothing.
			_, err := s.UpdateOrder(o.ID, func(o *Order) error { o.Period--; return nil })
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.UpdateOrder(o.ID, func(o *Order) error { o.Period++; return nil })
			if tt.paid > 1 && !errors.Is(err, ErrRenewedTwice) {
				t.Errorf("a period paid twice: %v, want ErrRenewedTwice", err)
			}
		})
	}
}

var errStale = errors.New("stale")

// The index of queued provider operations follows the order's Op.
func TestOrdersWithOpFollowsOp(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	if _, err := s.Deposit(7, 1000); err != nil {
		t.Fatal(err)
	}
	a, b := activeOrder(t, s, 100), activeOrder(t, s, 100)
	count := func() (ids []int64) {
		if err := s.OrdersWithOp(func(o Order) error { ids = append(ids, o.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for _, step := range []struct {
		id   int64
		op   string
		want int
	}{{a.ID, OpPowerOff, 1}, {b.ID, OpDelete, 2}, {a.ID, OpPowerOn, 2}, {a.ID, "", 1}, {b.ID, "", 0}} {
		if _, err := s.UpdateOrder(step.id, func(o *Order) error { o.QueueOp(step.op, time.Now()); return nil }); err != nil {
			t.Fatal(err)
		}
		if got := count(); len(got) != step.want {
			t.Errorf("after %q on %d: %v queued, want %d", step.op, step.id, got, step.want)
		}
	}
}

// A renewal given back (RefundedPeriod) is credited once, and only if it was charged:
// the same change saved again, or a period never renewed, moves no money.
func TestRenewalRefundIsGivenOnce(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	if _, err := s.Deposit(7, 300); err != nil {
		t.Fatal(err)
	}
	o := activeOrder(t, s, 100) // 200 available
	set := func(fn func(o *Order)) {
		t.Helper()
		if _, err := s.UpdateOrder(o.ID, func(o *Order) error { fn(o); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	set(func(o *Order) { o.Period = 2 })         // renewed: 100
	set(func(o *Order) { o.RefundedPeriod = 5 }) // never charged: nothing
	set(func(o *Order) { o.RefundedPeriod = 2 }) // given back: 200
	set(func(o *Order) { o.RefundedPeriod = 2; o.Reminded = 1 })
	set(func(o *Order) { o.RefundedPeriod = 0 })
	set(func(o *Order) { o.RefundedPeriod = 2 }) // its key holds: nothing
	b, _ := s.GetBalance(7)
	if b.Available != 200 {
		t.Fatalf("available %d, want 200 (one renewal charged, given back once)", b.Available)
	}
	refunds := 0
	ledger, _ := s.Ledger(7, 100)
	for _, e := range ledger {
		if e.Kind == LedgerRenewalRefund {
			refunds++
		}
	}
	if refunds != 1 {
		t.Fatalf("%d renewal refunds in the ledger, want 1", refunds)
	}
}
