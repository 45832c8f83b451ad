package store

import (
	"encoding/json"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// AuditCap is how many audit entries are kept: the newest, like the visitor log.
// At a change a minute that is more than two months of operations.
const AuditCap = 100_000

// AuditEntry is one change a person asked for through the admin API, and its outcome.
// It never holds a secret: the actor is a name ("admin token", an SSH key's
// fingerprint and comment), and Detail only what the caller chose to record.
type AuditEntry struct {
	ID     uint64    `json:"id"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Role   string    `json:"role"`
	Method string    `json:"method"`
	Route  string    `json:"route"` // the route's pattern, /admin/orders/:id/cancel
	Path   string    `json:"path"`  // the path asked for, with its ids
	Detail string    `json:"detail,omitempty"`
	Status int       `json:"status"`
	Code   string    `json:"code,omitempty"` // the error's machine word when it failed
}

// AppendAudit stores e with the next id and the store's time, dropping the oldest
// beyond AuditCap, and returns it as stored.
func (s *Store) AppendAudit(e AuditEntry) (AuditEntry, error) {
	id, err := s.nextSeq("audit")
	if err != nil {
		return AuditEntry{}, err
	}
	e.ID = id
	if e.At.IsZero() {
		e.At = s.now()
	}
	e.At = e.At.UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return AuditEntry{}, err
	}
	err = s.appendCapped(s.updateNow, prefixAudit, id, AuditCap, b)
	return e, err
}

// AuditLog returns up to limit entries with ids below before (0: from the newest),
// newest first.
func (s *Store) AuditLog(limit int, before uint64) ([]AuditEntry, error) {
	out := []AuditEntry{}
	if limit <= 0 {
		return out, nil
	}
	// Seek straight below before: paging back through a full log must not walk the
	// newer entries first.
	seek := u64Key(prefixAudit, ^uint64(0))
	if before > 0 {
		seek = u64Key(prefixAudit, before-1)
	}
	err := s.view(func(txn *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte(prefixAudit)
		opts.Reverse = true
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(seek); it.ValidForPrefix(opts.Prefix) && len(out) < limit; it.Next() {
			err := it.Item().Value(func(v []byte) error {
				var e AuditEntry
				if json.Unmarshal(v, &e) == nil {
					out = append(out, e)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// AuditCount counts the kept entries.
func (s *Store) AuditCount() (int, error) { return s.countPrefix(prefixAudit) }
