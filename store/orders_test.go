package store

import (
	"errors"
	"testing"
	"time"
)

// UpdateOrders is the group commit of the queue: one commit for many orders, each
// change standing or falling on its own.
func TestUpdateOrdersCommitsManyChangesAtOnce(t *testing.T) {
	errRefused := errors.New("refused")
	start := func(o *Order) error {
		if o.Status != OrderPending {
			return errRefused
		}
		o.Status = OrderProvisioning
		o.Attempts++
		o.Record(time.Now(), "started", "")
		return nil
	}
	tests := []struct {
		name string
		// refuse: the indexes of the orders whose change fails; missing adds an
		// order id that does not exist.
		refuse  []int
		missing bool
	}{
		{name: "all change"},
		{name: "one refused", refuse: []int{1}},
		{name: "all refused", refuse: []int{0, 1, 2}},
		{name: "one missing", missing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := quietOpen(t, t.TempDir())
			if _, err := s.Deposit(7, 1_000_000); err != nil {
				t.Fatal(err)
			}
			var changes []OrderChange
			refused := map[int]bool{}
			for i := range 3 {
				o, err := s.CreateOrder(Order{UserID: 7, TelegramUserID: 7, Provider: "sim", SpecID: "sim-nano", Region: "tokyo", PricePaid: 100}, OrderLimit{})
				if err != nil {
					t.Fatal(err)
				}
				apply := start
				for _, r := range tt.refuse {
					if r == i {
						refused[i] = true
						apply = func(*Order) error { return errRefused }
					}
				}
				changes = append(changes, OrderChange{ID: o.ID, Apply: apply, Notes: []OutboxMessage{{ChatID: 7, Text: "order started"}}})
			}
			if tt.missing {
				changes = append(changes, OrderChange{ID: 1 << 40, Apply: start, Notes: []OutboxMessage{{ChatID: 7, Text: "never"}}})
			}
			// The outbox ids' first lease is a commit of its own; take it now.
			if _, err := s.nextSeq("outbox"); err != nil {
				t.Fatal(err)
			}
			before := s.LogStats().Commits
			outboxBefore := countOutbox(t, s)

			results, err := s.UpdateOrders(changes)
			if err != nil {
				t.Fatal(err)
			}

			if len(results) != len(changes) {
				t.Fatalf("%d results for %d changes", len(results), len(changes))
			}
			wantCommits := int64(1)
			if len(refused) == 3 && !tt.missing {
				wantCommits = 0 // nothing to write
			}
			if got := s.LogStats().Commits - before; got != wantCommits {
				t.Errorf("%d commits, want %d", got, wantCommits)
			}
			changed := 0
			for i, r := range results {
				stored, getErr := s.GetOrder(changes[i].ID)
				switch {
				case i == 3: // the missing order
					if !errors.Is(r.Err, ErrNotFound) || r.Notes != nil {
						t.Errorf("missing order: err %v, notes %v; want ErrNotFound and no notes", r.Err, r.Notes)
					}
				case refused[i]:
					if !errors.Is(r.Err, errRefused) || r.Notes != nil {
						t.Errorf("order %d: err %v, notes %v; want its own error and no notes", i, r.Err, r.Notes)
					}
					if getErr != nil || stored.Status != OrderPending || len(stored.History) != 1 {
						t.Errorf("refused order %d was touched: %+v, %v", i, stored, getErr)
					}
				default:
					changed++
					if r.Err != nil || r.Order.Status != OrderProvisioning || len(r.Notes) != 1 || r.Notes[0].ID == 0 {
						t.Errorf("order %d: %+v", i, r)
					}
					if getErr != nil || stored.Status != OrderProvisioning || stored.Attempts != 1 {
						t.Errorf("order %d stored as %+v, %v", i, stored, getErr)
					}
				}
			}
			if n, _ := s.CountOrders(OrderProvisioning); n != changed {
				t.Errorf("status index holds %d provisioning orders, want %d", n, changed)
			}
			if got := countOutbox(t, s) - outboxBefore; got != changed {
				t.Errorf("%d notes queued, want %d (one per changed order)", got, changed)
			}
		})
	}
}

func countOutbox(t *testing.T, s *Store) int {
	t.Helper()
	n, err := s.countPrefix(prefixOutbox)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
