package store

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// VisitorCap is how many hits the visitor log keeps (seed 004: the latest 3000).
const VisitorCap = 3000

// Visitor is one logged hit. It carries the raw IP for the admin map, as the seed does;
// it is only ever returned by the admin API.
type Visitor struct {
	TS      time.Time `json:"ts"`
	IP      string    `json:"ip"`
	Slug    string    `json:"slug"`
	Country string    `json:"country"`
	City    string    `json:"city"`
	Lat     float64   `json:"lat"`
	Lon     float64   `json:"lon"`
}

// RecentVisitors returns up to limit logged hits, newest first.
func (s *Store) RecentVisitors(limit int) ([]Visitor, error) {
	var out []Visitor
	err := s.view(func(txn *tx) error {
		var err error
		out, err = recentVisitors(txn, limit)
		return err
	})
	return out, err
}

// VisitorCount counts the entries in the visitor log.
func (s *Store) VisitorCount() (int, error) { return s.countPrefix(prefixVisitor) }

// The visitor log is a ring of VisitorCap slots: hit n overwrites slot n mod VisitorCap,
// so the cap holds by construction and a hit writes one entry, with no tombstone to
// trim. Each slot's value starts with the hit's 8-byte sequence number, which orders
// the ring for reading.
func visitorSlotKey(seq uint64) []byte { return u64Key(prefixVisitor, seq%VisitorCap) }

func encodeVisitorSlot(seq uint64, v Visitor) ([]byte, error) {
	b, err := encodeRecord(&v)
	if err != nil {
		return nil, err
	}
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(b)), seq), b...), nil
}

// recentVisitors reads the whole ring (VisitorCap small values) and sorts it by
// sequence: the admin map wants the newest, and the ring has no order of its own.
func recentVisitors(txn *tx, limit int) ([]Visitor, error) {
	out := []Visitor{}
	if limit <= 0 {
		return out, nil
	}
	type slot struct {
		seq uint64
		v   Visitor
	}
	var all []slot
	err := scanPrefix(txn, prefixVisitor, false, func(_, val []byte) (bool, error) {
		if len(val) < 8 {
			return true, nil
		}
		var v Visitor
		if err := decodeRecord(val[8:], &v); err == nil {
			all = append(all, slot{binary.BigEndian.Uint64(val), v})
		}
		return true, nil
	})
	slices.SortFunc(all, func(a, b slot) int { return cmp.Compare(b.seq, a.seq) })
	for _, sl := range all[:min(limit, len(all))] {
		out = append(out, sl.v)
	}
	return out, err
}

// Trimming as a log appends: an append that follows the last one this process made
// deletes the one entry capacity sequence numbers back. Any other (the first after
// Open, one after a number was skipped or a commit failed, one committed out of order)
// deletes every entry from the log's low-water mark up to capacity numbers back,
// seeking to the mark rather than rewinding, because the front of a trimmed log is a
// run of tombstones an iterator must walk (and an iterator copies the log's unapplied
// entries: one per append made 10,000 appends take a minute). The mark and the last
// number move only once an append has committed. Numbers leased but never used across
// a crash (up to a lease), or skipped by failed commits, stranded the entries capacity
// below them when every append made only the blind delete (5,759 inquiries kept under
// a cap of 5,000).
type cappedLows struct {
	mu  sync.Mutex
	log map[string]cappedLog
}

type cappedLog struct {
	low  uint64 // lowest sequence number that may hold an entry
	last uint64 // the newest appended
}

func (c *cappedLows) get(prefix string) (cappedLog, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.log[prefix]
	return l, ok
}

func (c *cappedLows) appended(prefix string, low, seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.log == nil {
		c.log = map[string]cappedLog{}
	}
	l := c.log[prefix]
	c.log[prefix] = cappedLog{low: max(l.low, low), last: max(l.last, seq)}
}

// appendCapped writes val as entry seq of a sequence-keyed log in one commit (update
// or updateNow) and keeps the log to the newest capacity sequence numbers, trimming as
// it appends so no sweeper is needed.
func (s *Store) appendCapped(commit func(func(txn *tx) error) error, prefix string, seq uint64, capacity int, val []byte) error {
	state, known := s.capped.get(prefix)
	var low uint64
	err := commit(func(txn *tx) error {
		if err := txn.Set(u64Key(prefix, seq), val); err != nil {
			return err
		}
		if seq <= uint64(capacity) {
			return nil
		}
		floor := seq - uint64(capacity)
		low = floor + 1
		switch {
		case known && state.low > floor:
			return nil // trimmed already, by an append after this one
		case known && seq == state.last+1:
			return txn.Delete(u64Key(prefix, floor))
		}
		return trimBelow(txn, prefix, state.low, floor, -1)
	})
	if err == nil {
		s.capped.appended(prefix, low, seq)
	}
	return err
}

// trimBelow deletes up to max entries (all for max < 0) of a sequence-keyed log with
// from ≤ seq ≤ floor.
func trimBelow(txn *tx, prefix string, from, floor uint64, max int) error {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = []byte(prefix)
	it := txn.NewIterator(opts)
	var doomed [][]byte
	for it.Seek(u64Key(prefix, from)); it.Valid() && (max < 0 || len(doomed) < max); it.Next() {
		k := it.Item().KeyCopy(nil)
		if u64FromKey(prefix, k) > floor {
			break
		}
		doomed = append(doomed, k)
	}
	it.Close()
	for _, k := range doomed {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) countPrefix(prefix string) (int, error) {
	n := 0
	err := s.view(func(txn *tx) error {
		return scanKeys(txn, prefix, func([]byte) { n++ })
	})
	return n, err
}
