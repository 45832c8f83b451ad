package store

import (
	"encoding/json"
	"errors"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// InquiryCap is how many contact-form messages are kept (seed 004: 5000).
const InquiryCap = 5000

// Inquiry is one contact-form message.
type Inquiry struct {
	ID        uint64    `json:"id"`
	Name      string    `json:"name"`
	Email     string    `json:"email"`
	Message   string    `json:"message"`
	IP        string    `json:"ip"`
	CreatedAt time.Time `json:"created_at"`
	// Read is set by an operator who has dealt with the message; it only marks it.
	Read bool `json:"read"`
}

// AddInquiry stores an inquiry, dropping the oldest beyond InquiryCap.
func (s *Store) AddInquiry(q Inquiry) (Inquiry, error) {
	id, err := s.nextSeq("inquiry")
	if err != nil {
		return Inquiry{}, err
	}
	q.ID = id
	q.CreatedAt = s.now().UTC().Truncate(time.Second)
	b, err := json.Marshal(q)
	if err != nil {
		return Inquiry{}, err
	}
	err = s.appendCapped(s.update, prefixInquiry, id, InquiryCap, b)
	return q, err
}

// Inquiries returns up to limit inquiries with ids below before (0: from the newest),
// newest first.
func (s *Store) Inquiries(limit int, before uint64) ([]Inquiry, error) {
	out := []Inquiry{}
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixInquiry, true, func(key, val []byte) (bool, error) {
			if before != 0 && u64FromKey(prefixInquiry, key) >= before {
				return true, nil
			}
			var q Inquiry
			if err := json.Unmarshal(val, &q); err == nil {
				out = append(out, q)
			}
			return len(out) < limit, nil
		})
	})
	return out, err
}

// InquiryCount counts the stored inquiries.
func (s *Store) InquiryCount() (int, error) { return s.countPrefix(prefixInquiry) }

// MarkInquiryRead marks one inquiry read and returns it; ErrNotFound when it is not
// kept (never sent, or dropped past InquiryCap). Marking twice is not an error.
func (s *Store) MarkInquiryRead(id uint64) (Inquiry, error) {
	var q Inquiry
	err := s.update(func(txn *tx) error {
		item, err := txn.Get(u64Key(prefixInquiry, id))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &q) }); err != nil {
			return err
		}
		if q.Read {
			return nil
		}
		q.Read = true
		b, err := json.Marshal(q)
		if err != nil {
			return err
		}
		return txn.Set(u64Key(prefixInquiry, id), b)
	})
	return q, err
}
