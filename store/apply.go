package store

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// applier writes durable commits into Badger behind the write-ahead log, many commits
// per Badger batch, then lets their entries leave the overlay and their segments go.
// It is the only writer Badger has, so it alone numbers Badger's versions.
type applier struct {
	s   *Store
	ts  uint64
	dir string
	// keep is set once a batch could not be applied: the log then stays on disk for
	// the next start to replay.
	keep bool
	// fault is Options.applyFault.
	fault func() error
	// unwritten holds the keys born in the log (see tx.markBorn) whose entries have
	// all been skipped so far: Badger has no version of them, so a delete that is
	// their newest entry need not reach it.
	unwritten map[string]struct{}
}

const (
	applyMaxEntries  = 64 << 10
	applyInterval    = 1000 * time.Millisecond
	applyMaxAttempts = 5
	replayBatch      = 16 << 10
)

// replay applies what the log holds from the last run and returns the number of the
// segment to write next.
func (a *applier) replay() (uint64, error) {
	if a.dir == "" {
		return 1, nil
	}
	start := time.Now()
	var batch []*walEntry
	segs, records, err := replayWAL(a.dir, func(entries []*walEntry) error {
		batch = append(batch, entries...)
		if len(batch) < replayBatch {
			return nil
		}
		err := a.writeReplayed(batch)
		batch = batch[:0]
		return err
	})
	if err == nil {
		err = a.writeReplayed(batch)
	}
	if err == nil {
		err = a.s.db.Sync()
	}
	if err != nil {
		return 0, fmt.Errorf("store: replay write-ahead log in %s: %w", a.dir, err)
	}
	for _, n := range segs {
		if err := os.Remove(segmentPath(a.dir, n)); err != nil {
			return 0, err
		}
	}
	if records > 0 {
		a.s.log.Info("store: replayed the write-ahead log", "commits", records, "segments", len(segs), "took", time.Since(start).Round(time.Millisecond))
	}
	if len(segs) == 0 {
		return 1, nil
	}
	return segs[len(segs)-1] + 1, nil
}

func (a *applier) loop(q *applyQueue) {
	defer close(a.s.applied)
	for {
		// Readers meanwhile find everything in the overlay.
		entries, closed, done := q.gather(applyMaxEntries, applyInterval)
		a.apply(entries)
		for _, n := range closed {
			if a.keep || a.dir == "" {
				continue
			}
			if err := os.Remove(segmentPath(a.dir, n)); err != nil {
				a.s.log.Error("store: remove applied write-ahead log segment", "segment", n, "err", err)
			}
		}
		if done {
			return
		}
	}
}

func (a *applier) apply(entries []*walEntry) {
	if len(entries) == 0 {
		return
	}
	last, elided := a.newest(entries)
	var err error
	for attempt := 1; attempt <= applyMaxAttempts; attempt++ {
		if err = a.writeUnique(last); err == nil {
			break
		}
		a.s.log.Error("store: apply the write-ahead log to badger", "attempt", attempt, "err", err)
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	if err != nil {
		// The entries stay readable in the overlay and durable in the log, which is
		// kept for the next start to replay.
		a.keep = true
		return
	}
	a.s.stats.applied.Add(int64(len(last)))
	a.s.stats.elided.Add(int64(len(elided)))
	a.s.stats.applyBatches.Add(1)
	// An elided delete is as applied as a written one: Badger has no value either way.
	a.s.cache.admit(append(last, elided...))
}

// writeReplayed puts entries read back from the log into Badger, the last entry of a
// key winning (they are not in the overlay, so newest cannot tell).
func (a *applier) writeReplayed(entries []*walEntry) error {
	lastOf := make(map[string]int, len(entries))
	for i, e := range entries {
		lastOf[e.key] = i
	}
	last := make([]*walEntry, 0, len(lastOf))
	for i, e := range entries {
		if lastOf[e.key] == i {
			last = append(last, e)
		}
	}
	return a.writeUnique(last)
}

// newest keeps the entries that are still their key's newest in the overlay: an older
// one need not reach Badger, since the newer one will, in this batch or a later one,
// and both are in the log until then. It is how live batches drop repeats without a map
// of their own. Of those, it returns apart the deletes of keys Badger never had (see
// unwritten): they need not reach Badger at all.
func (a *applier) newest(entries []*walEntry) (write, elided []*walEntry) {
	write = make([]*walEntry, 0, len(entries))
	for i := 0; i < len(entries); i += evictChunk {
		a.s.ovMu.RLock()
		for _, e := range entries[i:min(i+evictChunk, len(entries))] {
			if e.born {
				a.unwritten[e.key] = struct{}{}
			}
			if a.s.overlay[e.key] != e {
				continue
			}
			if _, never := a.unwritten[e.key]; never {
				delete(a.unwritten, e.key)
				if e.deleted {
					elided = append(elided, e)
					continue
				}
			}
			write = append(write, e)
		}
		a.s.ovMu.RUnlock()
	}
	return write, elided
}

// writeUnique writes entries whose keys are all different. It commits in small
// transactions and yields between them, so that a large batch does not hold the cores
// away from the requests being served.
func (a *applier) writeUnique(entries []*walEntry) error {
	for rest := entries; len(rest) > 0; {
		n, err := a.commitChunk(rest[:min(len(rest), applyChunk)])
		if err != nil {
			return err
		}
		rest = rest[n:]
		runtime.Gosched()
	}
	a.s.db.SetDiscardTs(a.ts)
	return nil
}

// applyChunk is how many entries one Badger transaction of the applier carries.
const applyChunk = 512

// commitChunk writes as many of entries as fit one transaction, as one new version, and
// returns how many it wrote.
func (a *applier) commitChunk(entries []*walEntry) (int, error) {
	if a.fault != nil {
		if err := a.fault(); err != nil {
			return 0, err
		}
	}
	txn := a.s.db.NewTransactionAt(math.MaxUint64, true)
	defer txn.Discard()
	n := 0
	for _, e := range entries {
		var err error
		if e.deleted {
			err = txn.Delete([]byte(e.key))
		} else {
			err = txn.SetEntry(&badger.Entry{Key: []byte(e.key), Value: e.val, ExpiresAt: e.expiresAt})
		}
		if errors.Is(err, badger.ErrTxnTooBig) && n > 0 {
			break
		}
		if err != nil {
			return 0, err
		}
		n++
	}
	a.ts++
	return n, txn.CommitAt(a.ts, nil)
}
