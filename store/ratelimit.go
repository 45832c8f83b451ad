package store

import (
	"errors"
	"time"
)

// Window is one user's rate-limit window, stored as ratelimit:{userID} with a TTL that
// ends with the window, exactly the seed's {count, resetAt} record.
type Window struct {
	Count   int       `json:"count"`
	ResetAt time.Time `json:"resetAt"`
	// Warned records that the user was already told to slow down in this window.
	Warned bool `json:"warned,omitempty"`
}

// LoadWindow returns the stored window of userID, or ErrNotFound when none is live.
func (s *Store) LoadWindow(userID int64) (Window, error) {
	if !s.known.mayBeKnown(userID) {
		return Window{}, ErrNotFound
	}
	var w Window
	err := s.view(func(txn *tx) error { return getRecord(txn, rateLimitKey(userID), &w) })
	return w, err
}

// ResetWindow deletes a user's window, as the seed's operators did by deleting the KV key.
// It reports whether a window existed.
func (s *Store) ResetWindow(userID int64) (bool, error) {
	var existed bool
	err := s.update(func(txn *tx) error {
		var err error
		existed, err = exists(txn, rateLimitKey(userID))
		if err != nil || !existed {
			return err
		}
		return txn.Delete(rateLimitKey(userID))
	})
	return existed, err
}

// WindowEntry is a stored window with its user, for listings.
type WindowEntry struct {
	UserID int64 `json:"user_id"`
	Window
}

// ListWindows returns live windows with at least minCount messages, most active first
// is left to the caller; at most limit entries are read.
func (s *Store) ListWindows(minCount, limit int) ([]WindowEntry, error) {
	var out []WindowEntry
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixRateLimit, false, func(key, val []byte) (bool, error) {
			var e WindowEntry
			if err := decodeRecord(val, &e.Window); err != nil {
				return true, nil
			}
			id, err := parseIntSuffix(key, prefixRateLimit)
			if err != nil {
				return true, nil
			}
			e.UserID = id
			if e.Count >= minCount {
				out = append(out, e)
			}
			return len(out) < limit, nil
		})
	})
	return out, err
}

func (s *Store) putWindow(txn *tx, userID int64, w Window, now time.Time) error {
	ttl := w.ResetAt.Sub(now)
	if ttl <= 0 {
		return txn.Delete(rateLimitKey(userID))
	}
	s.known.add(userID)
	// Badger TTLs have one-second resolution; round up so the entry never expires early.
	return putRecord(txn, rateLimitKey(userID), &w, ttl+time.Second)
}

var errInvalidKey = errors.New("store: malformed key")
