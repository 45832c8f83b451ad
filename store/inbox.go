package store

import (
	"encoding/binary"
	"errors"
	"time"
)

// SeenUpdateTTL is how long an update_id is remembered: Telegram re-delivers a failed
// update for up to 24 hours.
const SeenUpdateTTL = 24 * time.Hour

// ErrAlreadyProcessed is returned by CompleteUpdate when the update left the inbox
// already (a re-delivery raced the first processing).
var ErrAlreadyProcessed = errors.New("store: update already processed")

// InboxUpdate is an acknowledged Telegram update that has not been processed yet.
type InboxUpdate struct {
	UpdateID   int64
	ReceivedAt time.Time
	Body       []byte
}

// AcceptUpdate durably records a Telegram update in the inbox, unless its update_id was
// accepted in the last 24 hours, in which case fresh is false and nothing is written.
// Concurrent callers share one fdatasync.
func (s *Store) AcceptUpdate(updateID int64, body []byte) (fresh bool, err error) {
	now := s.now()
	val := make([]byte, 8+len(body))
	binary.BigEndian.PutUint64(val, uint64(now.UnixNano()))
	copy(val[8:], body)
	err = s.updateNow(func(txn *tx) error {
		seen, err := s.seenMarker(txn, updateID)
		if err != nil {
			return err
		}
		fresh = !seen
		if seen {
			return nil
		}
		if err := s.putSeenMarker(txn, updateID); err != nil {
			return err
		}
		return txn.Set(inboxKey(updateID), val)
	})
	return fresh, err
}

// PendingUpdates returns up to limit unprocessed updates in update_id order.
func (s *Store) PendingUpdates(limit int) ([]InboxUpdate, error) {
	var out []InboxUpdate
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixInbox, false, func(key, val []byte) (bool, error) {
			if len(val) < 8 {
				return true, nil
			}
			out = append(out, InboxUpdate{
				UpdateID:   int64(u64FromKey(prefixInbox, key)),
				ReceivedAt: time.Unix(0, int64(binary.BigEndian.Uint64(val))),
				Body:       append([]byte(nil), val[8:]...),
			})
			return len(out) < limit, nil
		})
	})
	return out, err
}

// UpdateOutcome is everything processing one update changes, committed atomically so
// that a crash either leaves the update in the inbox untouched or fully applied.
type UpdateOutcome struct {
	UpdateID int64
	UserID   int64
	// Window, when set, replaces the user's rate-limit window.
	Window *Window
	// Replies are queued in the outbox.
	Replies []OutboxMessage
	// LogOnly records the replies straight in the outlog as logged: Telegram sending
	// is off, so there is nothing to queue.
	LogOnly bool
	// Language, when set, replaces the user's language record.
	Language *UserLanguage
}

// CompleteUpdate applies an outcome and removes the update from the inbox, returning
// the queued replies with their ids. It returns ErrAlreadyProcessed when the update is
// no longer in the inbox.
func (s *Store) CompleteUpdate(o UpdateOutcome) ([]OutboxMessage, error) {
	now := s.now()
	replies, err := s.assignIDs(o.Replies, now)
	if err != nil {
		return nil, err
	}
	err = s.update(func(txn *tx) error {
		pending, err := exists(txn, inboxKey(o.UpdateID))
		if err != nil {
			return err
		}
		if !pending {
			return ErrAlreadyProcessed
		}
		if err := s.putOutcome(txn, o, replies, now); err != nil {
			return err
		}
		return txn.Delete(inboxKey(o.UpdateID))
	})
	if err != nil {
		return nil, err
	}
	return replies, nil
}

// putOutcome writes what processing an update changed: the window, the user's seen
// mark, their language record and the replies, numbered by assignIDs.
func (s *Store) putOutcome(txn *tx, o UpdateOutcome, replies []OutboxMessage, now time.Time) error {
	// The seen mark first: the window's write makes the user known (knownusers.go),
	// after which the mark would search Badger for a new user's record.
	if err := s.markUserSeen(txn, o.UserID, now); err != nil { // broadcasts' recipients
		return err
	}
	if o.Window != nil {
		if err := s.putWindow(txn, o.UserID, *o.Window, now); err != nil {
			return err
		}
	}
	if o.Language != nil {
		if err := s.putUserLanguage(txn, o.UserID, o.Language); err != nil {
			return err
		}
	}
	for i := range replies {
		var err error
		if o.LogOnly {
			err = s.appendOutlog(txn, replies[i], MessageLogged, "", now)
		} else {
			err = putNewOutbox(txn, &replies[i])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// InboxDepth counts unprocessed updates.
func (s *Store) InboxDepth() (int, error) { return s.countPrefix(prefixInbox) }
