package store

import (
	"errors"
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
	LedgerRefund  = "refund"
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
	b, err := getBalance(txn, user)
	if err != nil {
		return err
	}
	switch kind {
	case LedgerDeposit, LedgerRefund:
		b.Available += amount
	case LedgerHold:
		if b.Available < amount {
			return ErrInsufficientFunds
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
		return errors.New("store: ledger would go negative: refusing")
	}
	b.UpdatedAt = now
	b.Seq++
	if err := putRecord(txn, balanceKey(user), &b, 0); err != nil {
		return err
	}
	return putRecord(txn, ledgerKey(user, b.Seq), &LedgerEntry{
		Seq: b.Seq, UserID: user, Kind: kind, Amount: amount, OrderID: orderID,
		Available: b.Available, Held: b.Held, At: now,
	}, 0)
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
