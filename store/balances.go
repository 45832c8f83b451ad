package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrInsufficientFunds is returned when a hold would take a balance below zero.
var ErrInsufficientFunds = errors.New("store: insufficient funds")

// Balance is a user's money in minor units: Available can be spent, Held is reserved
// by orders that are not finished yet. Neither ever goes below zero.
type Balance struct {
	UserID    int64     `json:"user_id"`
	Available int64     `json:"available"`
	Held      int64     `json:"held"`
	UpdatedAt time.Time `json:"updated_at"`
	// Seq numbers the user's ledger entries. It lives in the balance record so that
	// ledger order is commit order: every move reads and writes this record.
	Seq uint64 `json:"seq"`
}

// Ledger entry kinds: every change of a balance is one of these.
const (
	LedgerDeposit = "deposit"
	LedgerHold    = "hold"
	LedgerCapture = "capture"
	LedgerRelease = "release"
	// LedgerRenewal pays one more billing period of an order from the available
	// balance (issue 17); its note names the period.
	LedgerRenewal = "renewal"
	// LedgerRenewalRefund gives a renewal back to the available balance: the period's
	// server was found gone at the provider before it ran.
	LedgerRenewalRefund = "renewal_refund"
)

// LedgerEntry records one movement of money.
type LedgerEntry struct {
	Seq       uint64    `json:"seq"`
	UserID    int64     `json:"user_id"`
	Kind      string    `json:"kind"`
	Amount    int64     `json:"amount"`
	OrderID   int64     `json:"order_id,omitempty"`
	Available int64     `json:"available_after"`
	Held      int64     `json:"held_after"`
	At        time.Time `json:"at"`
	Note      string    `json:"note,omitempty"`
}

func getBalance(txn *tx, user int64) (Balance, error) {
	var b Balance
	err := getRecord(txn, balanceKey(user), &b)
	if errors.Is(err, ErrNotFound) {
		return Balance{UserID: user}, nil
	}
	return b, err
}

// moveMoney applies one ledger movement inside txn.
func (s *Store) moveMoney(txn *tx, user int64, kind string, amount, orderID int64, now time.Time) error {
	_, err := s.moveMoneyNoted(txn, user, kind, amount, orderID, now, "")
	return err
}

// moveMoneyNoted is moveMoney with a note on the entry; it returns the entry's seq.
func (s *Store) moveMoneyNoted(txn *tx, user int64, kind string, amount, orderID int64, now time.Time, note string) (uint64, error) {
	b, err := getBalance(txn, user)
	if err != nil {
		return 0, err
	}
	switch kind {
	case LedgerDeposit, LedgerRenewalRefund:
		b.Available += amount
	case LedgerRenewal:
		if b.Available < amount {
			return 0, ErrInsufficientFunds
		}
		b.Available -= amount
	case LedgerHold:
		if b.Available < amount {
			return 0, ErrInsufficientFunds
		}
		b.Available -= amount
		b.Held += amount
	case LedgerCapture:
		b.Held -= amount
	case LedgerRelease:
		b.Held -= amount
		b.Available += amount
	}
	if b.Held < 0 || b.Available < 0 {
		return 0, errors.New("store: ledger would go negative: refusing")
	}
	b.UpdatedAt = now
	b.Seq++
	if err := putRecord(txn, balanceKey(user), &b, 0); err != nil {
		return 0, err
	}
	return b.Seq, putListed(txn, ledgerKey(user, b.Seq), &LedgerEntry{
		Seq: b.Seq, UserID: user, Kind: kind, Amount: amount, OrderID: orderID,
		Available: b.Available, Held: b.Held, At: now, Note: note,
	})
}

// Deposit credits a user's balance and returns it.
func (s *Store) Deposit(user, amount int64) (Balance, error) {
	if amount <= 0 {
		return Balance{}, errors.New("store: deposit must be positive")
	}
	now := s.now()
	var b Balance
	err := s.update(func(txn *tx) error {
		if err := s.moveMoney(txn, user, LedgerDeposit, amount, 0, now); err != nil {
			return err
		}
		var err error
		b, err = getBalance(txn, user)
		return err
	})
	return b, err
}

// GetBalance returns a user's balance (zero when the user never had money).
func (s *Store) GetBalance(user int64) (Balance, error) {
	var b Balance
	err := s.view(func(txn *tx) error {
		var err error
		b, err = getBalance(txn, user)
		return err
	})
	return b, err
}

// Ledger returns up to limit entries of a user's ledger, oldest first.
func (s *Store) Ledger(user int64, limit int) ([]LedgerEntry, error) {
	var out []LedgerEntry
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, ledgerPrefix(user), false, func(_, val []byte) (bool, error) {
			var e LedgerEntry
			if err := decodeRecord(val, &e); err != nil {
				return false, err
			}
			out = append(out, e)
			return len(out) < limit, nil
		})
	})
	return out, err
}

// LedgerTail returns the newest limit entries of a user's ledger, oldest first: what
// an operator looking at the user wants (Ledger stopped at the oldest limit, so past
// it the newest deposit was missing while the balance above the list held it).
func (s *Store) LedgerTail(user int64, limit int) ([]LedgerEntry, error) {
	var out []LedgerEntry
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, ledgerPrefix(user), true, func(_, val []byte) (bool, error) {
			var e LedgerEntry
			if err := decodeRecord(val, &e); err != nil {
				return false, err
			}
			out = append(out, e)
			return len(out) < limit, nil
		})
	})
	slices.Reverse(out)
	return out, err
}

// Ledger kinds written only by the move of accounts to user_id (see
// moveAccountsToUserID): a hold taken from the wrong account leaves it and arrives
// at the order's user.
const (
	LedgerMoveOut = "move_out"
	LedgerMoveIn  = "move_in"
)

// moveAccountsToUserID is the migration to seed 002's account rule. Before it, money
// and the order window were keyed by an order's telegram_user_id, so an API client
// ordering as user_id U for Telegram user T held money from T's balance. From now on
// they are U's. Orders are the only record that pairs the two ids, so they decide:
//   - T that met only one U and is no account of its own (no order has user_id T)
//     was U all along: T's balance, ledger and order window become U's
//     (merged after whatever U already had);
//   - any other T is an account in its own right (a bot user, or a chat several users
//     share) and keeps its money, but the hold of each unfinished order of another
//     user moves to that user, so that capturing or releasing it later finds it there.
//
// The orders' own index by Telegram user stays: it is where a chat's /servers looks.
func moveAccountsToUserID(txn *tx) error {
	users := map[int64]map[int64]bool{} // telegram id → the user_ids that ordered for it
	accounts := map[int64]bool{}        // ids that ordered as an account of their own
	var held []Order                    // unfinished orders whose hold is on another id
	err := scanPrefix(txn, prefixOrder, false, func(_, val []byte) (bool, error) {
		var o Order
		if err := decodeRecord(val, &o); err != nil {
			return false, err
		}
		if o.UserID == 0 || o.UserID == o.TelegramUserID {
			accounts[o.TelegramUserID] = true
			return true, nil
		}
		// A user_id is an account whatever Telegram id it also is: its money must not
		// follow that Telegram id to another user.
		accounts[o.UserID] = true
		if users[o.TelegramUserID] == nil {
			users[o.TelegramUserID] = map[int64]bool{}
		}
		users[o.TelegramUserID][o.UserID] = true
		if o.Money == MoneyHeld && o.PricePaid > 0 {
			held = append(held, o)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	now := time.Now()
	whole := map[int64]bool{}
	for tg, us := range users {
		if len(us) != 1 || accounts[tg] {
			continue
		}
		for u := range us {
			if err := mergeAccount(txn, tg, u, now); err != nil {
				return fmt.Errorf("move account %d to user %d: %w", tg, u, err)
			}
		}
		whole[tg] = true
	}
	for _, o := range held {
		if whole[o.TelegramUserID] {
			continue // the hold moved with the whole account
		}
		if err := moveHold(txn, o, now); err != nil {
			return fmt.Errorf("move the hold of order %d: %w", o.ID, err)
		}
	}
	return nil
}

// mergeAccount moves from's balance, ledger and order window to to. from's ledger
// entries follow to's, renumbered, with the running totals they would have had there.
func mergeAccount(txn *tx, from, to int64, now time.Time) error {
	src, err := getBalance(txn, from)
	if err != nil {
		return err
	}
	dst, err := getBalance(txn, to)
	if err != nil {
		return err
	}
	var entries []LedgerEntry
	var keys [][]byte
	err = scanPrefix(txn, ledgerPrefix(from), false, func(key, val []byte) (bool, error) {
		var e LedgerEntry
		if err := decodeRecord(val, &e); err != nil {
			return false, err
		}
		entries, keys = append(entries, e), append(keys, key)
		return true, nil
	})
	if err != nil {
		return err
	}
	for i, e := range entries {
		dst.Seq++
		e.Seq, e.UserID = dst.Seq, to
		e.Available += dst.Available
		e.Held += dst.Held
		e.Note = strings.TrimSpace(e.Note + fmt.Sprintf(" (moved from telegram_user_id %d)", from))
		if err := putListed(txn, ledgerKey(to, e.Seq), &e); err != nil {
			return err
		}
		if err := txn.Delete(keys[i]); err != nil {
			return err
		}
	}
	dst.UserID = to
	dst.Available += src.Available
	dst.Held += src.Held
	if src.UpdatedAt.After(dst.UpdatedAt) {
		dst.UpdatedAt = src.UpdatedAt
	}
	if err := putRecord(txn, balanceKey(to), &dst, 0); err != nil {
		return err
	}
	if err := txn.Delete(balanceKey(from)); err != nil {
		return err
	}
	// The order window: from's counts as to's unless to has a live one of its own.
	var w Window
	switch err := getRecord(txn, orderRateKey(from), &w); {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if err := txn.Delete(orderRateKey(from)); err != nil {
		return err
	}
	if ok, err := exists(txn, orderRateKey(to)); err != nil || ok || !w.ResetAt.After(now) {
		return err
	}
	return putRecord(txn, orderRateKey(to), &w, w.ResetAt.Sub(now)+time.Second)
}

// moveHold moves one unfinished order's hold from its Telegram user's account to its
// user's, each side recorded in its ledger.
func moveHold(txn *tx, o Order, now time.Time) error {
	from, err := getBalance(txn, o.TelegramUserID)
	if err != nil {
		return err
	}
	if from.Held < o.PricePaid {
		// The hold is not there (a ledger repaired by hand?): moving it would invent money.
		return nil
	}
	to, err := getBalance(txn, o.UserID)
	if err != nil {
		return err
	}
	from.UserID, to.UserID = o.TelegramUserID, o.UserID
	from.Held -= o.PricePaid
	to.Held += o.PricePaid
	for _, side := range []struct {
		b    *Balance
		kind string
		note string
	}{
		{&from, LedgerMoveOut, fmt.Sprintf("hold of order %d moved to user_id %d", o.ID, o.UserID)},
		{&to, LedgerMoveIn, fmt.Sprintf("hold of order %d moved from telegram_user_id %d", o.ID, o.TelegramUserID)},
	} {
		b := side.b
		b.Seq++
		b.UpdatedAt = now
		if err := putRecord(txn, balanceKey(b.UserID), b, 0); err != nil {
			return err
		}
		if err := putListed(txn, ledgerKey(b.UserID, b.Seq), &LedgerEntry{
			Seq: b.Seq, UserID: b.UserID, Kind: side.kind, Amount: o.PricePaid, OrderID: o.ID,
			Available: b.Available, Held: b.Held, At: now, Note: side.note,
		}); err != nil {
			return err
		}
	}
	return nil
}
