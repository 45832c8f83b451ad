package logring

import (
	"log/slog"
	"sync"
	"time"
)

// Record is one kept log line. Msg and Attrs are already scrubbed.
type Record struct {
	Seq   uint64
	Time  time.Time
	Level slog.Level
	Msg   string
	Attrs string
}

// DefaultCapacity is how many records a Ring keeps unless told otherwise: a few
// minutes of a busy daemon, well under a megabyte.
const DefaultCapacity = 2000

// Ring is a bounded buffer of the newest records, numbered from 1 in arrival order.
// It is safe for concurrent use.
type Ring struct {
	mu   sync.Mutex
	buf  []Record
	last uint64 // sequence number of the newest record; 0 before the first
}

// New returns an empty ring of capacity records (DefaultCapacity when ≤ 0).
func New(capacity int) *Ring {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	return &Ring{buf: make([]Record, capacity)}
}

func (r *Ring) add(rec Record) {
	r.mu.Lock()
	r.last++
	rec.Seq = r.last
	r.buf[int((r.last-1)%uint64(len(r.buf)))] = rec
	r.mu.Unlock()
}

// Since returns up to limit records after sequence number since at level min or
// above, oldest first, and the newest sequence number held. gap is true when records
// after since have been pushed out already, so the caller knows it missed some.
// With more than limit matching, the newest limit are returned: a console that fell
// behind wants the present, not the past.
func (r *Ring) Since(since uint64, min slog.Level, limit int) (recs []Record, last uint64, gap bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	last = r.last
	if since >= last {
		return nil, last, false
	}
	oldest := uint64(1)
	if n := uint64(len(r.buf)); last > n {
		oldest = last - n + 1
	}
	from := since + 1
	if from < oldest {
		from, gap = oldest, since > 0 || oldest > 1
	}
	for seq := last; seq >= from && (limit <= 0 || len(recs) < limit); seq-- {
		rec := r.buf[int((seq-1)%uint64(len(r.buf)))]
		if rec.Level >= min {
			recs = append(recs, rec)
		}
	}
	for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
		recs[i], recs[j] = recs[j], recs[i]
	}
	return recs, last, gap
}
