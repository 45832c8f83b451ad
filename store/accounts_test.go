package store

import (
	"testing"
	"time"
)

// oldOrder writes, as hangar stored it before schema 5, an order of user_id user sent
// to Telegram user tg whose price was held from tg's balance.
func oldOrder(t *testing.T, s *Store, id, user, tg, price int64, money string) {
	t.Helper()
	err := s.update(func(txn *tx) error {
		o := Order{ID: id, UserID: user, TelegramUserID: tg, ChatID: tg, Status: OrderPending, SpecID: "sim-nano",
			Region: "tokyo", Provider: "sim", PricePaid: price, Money: money, CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if money == MoneyHeld {
			if err := s.moveMoney(txn, tg, LedgerHold, price, id, time.Now()); err != nil {
				return err
			}
		}
		if err := putRecord(txn, orderKey(id), &o, 0); err != nil {
			return err
		}
		return txn.Set(orderStatusKey(o.Status, id), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reopenAtSchema4 makes the store run the accounts migration again at its next open.
func reopenAtSchema4(t *testing.T, s *Store, dir string) *Store {
	t.Helper()
	if err := s.update(func(txn *tx) error { return txn.Set([]byte(metaSchemaVersion), []byte("4")) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	t.Cleanup(func() { s.Close() })
	if v, _ := s.SchemaVersion(); v != len(migrations) {
		t.Fatalf("schema %d after the migration", v)
	}
	return s
}

func balanceIs(t *testing.T, s *Store, user, available, held int64) {
	t.Helper()
	b, err := s.GetBalance(user)
	if err != nil || b.Available != available || b.Held != held {
		t.Errorf("user %d: available %d held %d (%v), want %d and %d", user, b.Available, b.Held, err, available, held)
	}
	ledger, _ := s.Ledger(user, 1000)
	var av, hd int64
	for i, e := range ledger {
		if e.Seq != uint64(i+1) || e.UserID != user {
			t.Errorf("user %d: ledger entry %d is %+v", user, i+1, e)
		}
		av, hd = e.Available, e.Held
	}
	if av != b.Available || hd != b.Held {
		t.Errorf("user %d: the ledger ends at %d/%d, the balance is %d/%d", user, av, hd, b.Available, b.Held)
	}
}

func TestAccountsMoveFromTelegramIDToUserID(t *testing.T) {
	t.Run("one user per Telegram id: the whole account moves", func(t *testing.T) {
		dir := t.TempDir()
		s := quietOpen(t, dir)
		// Before: the operator deposited to 42 (the only id that worked) and to user 1;
		// the API ordered as user_id 1 for Telegram 42, held from 42.
		if _, err := s.Deposit(42, 20000); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Deposit(1, 500); err != nil {
			t.Fatal(err)
		}
		oldOrder(t, s, 100, 1, 42, 5000, MoneyHeld)
		if err := s.update(func(txn *tx) error {
			return putRecord(txn, orderRateKey(42), &Window{Count: 3, ResetAt: time.Now().Add(time.Hour)}, time.Hour)
		}); err != nil {
			t.Fatal(err)
		}
		s = reopenAtSchema4(t, s, dir)

		balanceIs(t, s, 1, 500+15000, 5000)
		if b, _ := s.GetBalance(42); b.Available != 0 || b.Held != 0 || b.Seq != 0 {
			t.Errorf("Telegram id 42 keeps a balance: %+v", b)
		}
		// The window moved: seven more orders fill it, the eleventh is refused.
		limit := OrderLimit{Max: 10, Window: time.Hour}
		for i := range 8 {
			_, err := s.CreateOrder(Order{UserID: 1, TelegramUserID: 42, PricePaid: 1}, limit)
			if want := i < 7; (err == nil) != want {
				t.Fatalf("order %d after the move: %v", i+4, err)
			}
		}
		// Capturing the old order's hold finds it on user 1.
		if _, err := s.UpdateOrder(100, func(o *Order) error { o.Status = OrderActive; return nil }); err != nil {
			t.Fatalf("capture after the move: %v", err)
		}
		balanceIs(t, s, 1, 500+15000-7, 7)
	})

	t.Run("a Telegram id that is an account too keeps its money; the hold moves", func(t *testing.T) {
		dir := t.TempDir()
		s := quietOpen(t, dir)
		if _, err := s.Deposit(42, 20000); err != nil {
			t.Fatal(err)
		}
		oldOrder(t, s, 100, 42, 42, 3000, MoneyCaptured) // the bot user 42 ordered for themselves
		oldOrder(t, s, 101, 1, 42, 5000, MoneyHeld)      // the API, as user 1, for chat 42
		oldOrder(t, s, 102, 2, 42, 4000, MoneyReleased)  // another user, finished: nothing held
		s = reopenAtSchema4(t, s, dir)

		balanceIs(t, s, 42, 15000, 0)
		balanceIs(t, s, 1, 0, 5000)
		balanceIs(t, s, 2, 0, 0)
		if _, err := s.UpdateOrder(101, func(o *Order) error { o.Status = OrderFailed; return nil }); err != nil {
			t.Fatalf("release after the move: %v", err)
		}
		balanceIs(t, s, 1, 5000, 0)
	})

	t.Run("a user_id that is also another user's Telegram id keeps its own orders' money", func(t *testing.T) {
		dir := t.TempDir()
		s := quietOpen(t, dir)
		if _, err := s.Deposit(42, 10000); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Deposit(7, 10000); err != nil {
			t.Fatal(err)
		}
		oldOrder(t, s, 100, 1, 42, 5000, MoneyHeld) // user 1, messages to 42: held from 42
		oldOrder(t, s, 101, 42, 7, 3000, MoneyHeld) // user 42, messages to 7: held from 7
		s = reopenAtSchema4(t, s, dir)

		balanceIs(t, s, 7, 0, 0)         // 7 only ever stood for user 42
		balanceIs(t, s, 42, 12000, 3000) // its deposit less order 100's hold, 7's money, its own order's hold
		balanceIs(t, s, 1, 0, 5000)      // order 100's hold
		for _, id := range []int64{100, 101} {
			if _, err := s.UpdateOrder(id, func(o *Order) error { o.Status = OrderActive; return nil }); err != nil {
				t.Fatalf("capture order %d after the move: %v", id, err)
			}
		}
		balanceIs(t, s, 42, 12000, 0)
		balanceIs(t, s, 1, 0, 0)
	})
}

// New orders hold from user_id and count against user_id's window; the Telegram id
// only receives the messages.
func TestOrdersHoldFromUserIDNotTelegramID(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	if _, err := s.Deposit(1, 7000); err != nil {
		t.Fatal(err)
	}
	o, err := s.CreateOrder(Order{UserID: 1, TelegramUserID: 42, ChatID: 42, PricePaid: 7000}, OrderLimit{Max: 1, Window: time.Hour})
	if err != nil {
		t.Fatalf("order as user 1 for Telegram 42 with user 1's money: %v", err)
	}
	balanceIs(t, s, 1, 0, 7000)
	balanceIs(t, s, 42, 0, 0)
	if _, err := s.CreateOrder(Order{UserID: 1, TelegramUserID: 43, PricePaid: 0}, OrderLimit{Max: 1, Window: time.Hour}); err != ErrOrderRateLimited {
		t.Fatalf("user 1's second order in the window under another Telegram id: %v", err)
	}
	if got, _ := s.UserOrders(42, 10); len(got) != 1 || got[0].ID != o.ID {
		t.Fatalf("the order is not listed for the chat it reports to: %+v", got)
	}
}
