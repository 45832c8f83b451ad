package store

import (
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// SealedPassword is an order's root password, encrypted with a key that is not in the
// store (see engine.Vault): kept only until the message carrying it was sent and the
// owner's window to ask again has passed, then deleted, and its key with it.
type SealedPassword struct {
	OrderID int64  `json:"order_id"`
	Epoch   uint64 `json:"epoch"` // which key sealed it
	Sealed  []byte `json:"sealed"`
	// DoneAt is when the message carrying it was sent (or finally refused); zero until then.
	DoneAt time.Time `json:"done_at,omitzero"`
}

// VaultSince returns when the password vault first opened, recording fallback as that
// time if the store holds none yet; the first recorded time is kept for good.
func (s *Store) VaultSince(fallback time.Time) (time.Time, error) {
	var since time.Time
	err := s.update(func(txn *tx) error {
		item, err := txn.Get([]byte(metaVaultSince))
		if err == nil {
			b, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			since, err = time.Parse(time.RFC3339Nano, string(b))
			return err
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		since = fallback.UTC()
		return txn.Set([]byte(metaVaultSince), []byte(since.Format(time.RFC3339Nano)))
	})
	return since, err
}

// PutSealedPassword stores (or replaces) an order's sealed password.
func (s *Store) PutSealedPassword(p SealedPassword) error {
	return s.update(func(txn *tx) error { return putRecord(txn, sealedPasswordKey(p.OrderID), &p, 0) })
}

// GetSealedPassword reads an order's sealed password, or ErrNotFound.
func (s *Store) GetSealedPassword(orderID int64) (SealedPassword, error) {
	var p SealedPassword
	err := s.view(func(txn *tx) error { return getRecord(txn, sealedPasswordKey(orderID), &p) })
	return p, err
}

// DeleteSealedPassword forgets an order's sealed password; a missing one is not an error.
func (s *Store) DeleteSealedPassword(orderID int64) error {
	return s.update(func(txn *tx) error { return txn.Delete(sealedPasswordKey(orderID)) })
}

// SealedPasswords returns every sealed password kept, by order id.
func (s *Store) SealedPasswords() ([]SealedPassword, error) {
	var out []SealedPassword
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixSealedPassword, false, func(_, val []byte) (bool, error) {
			var p SealedPassword
			if err := decodeRecord(val, &p); err != nil {
				return false, err
			}
			out = append(out, p)
			return true, nil
		})
	})
	return out, err
}

func sealedPasswordKey(orderID int64) []byte { return u64Key(prefixSealedPassword, uint64(orderID)) }

// markSealedPasswordDone records that the message carrying the order's password went
// out (or was finally refused) at t, which starts its /password window; a password
// already marked keeps its first time, and an order without one is left alone.
func markSealedPasswordDone(txn *tx, orderID int64, t time.Time) error {
	var p SealedPassword
	err := getRecord(txn, sealedPasswordKey(orderID), &p)
	if errors.Is(err, ErrNotFound) || err == nil && !p.DoneAt.IsZero() {
		return nil
	}
	if err != nil {
		return err
	}
	p.DoneAt = t
	return putRecord(txn, sealedPasswordKey(orderID), &p, 0)
}

// DeleteSealedPasswords forgets many sealed passwords in one commit.
func (s *Store) DeleteSealedPasswords(orderIDs []int64) error {
	if len(orderIDs) == 0 {
		return nil
	}
	return s.update(func(txn *tx) error {
		for _, id := range orderIDs {
			if err := txn.Delete(sealedPasswordKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
}
