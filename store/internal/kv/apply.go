package kv

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// applier writes durable commits into Badger behind the write-ahead log, many commits
// per Badger batch, then lets their entries leave the overlay and their segments go.
// It is the only writer Badger has, so it alone numbers Badger's versions.
type applier struct {
	s   *DB
	ts  uint64
	dir string
	// keep is set once a batch could not be applied: the log then stays on disk for
	// the next start to replay.
	keep bool
	// sync makes Badger's copy of a segment durable before the segment goes (Badger's
	// writes are not synced one by one); syncFault is Options.badgerSyncFault.
	sync      bool
	syncFault func() error
	// fault is Options.applyFault.
	fault func() error
	// pos is how far Badger holds the log (walApplied).
	pos logPos
	// closed are segments applied and closed but not removed yet (removeClosed).
	closed []uint64
	// unwritten holds the keys born in the log (see tx.MarkBorn) whose entries have
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
// segment to write next. A damaged log stops it (LogDamageError); only the unsynced end
// of the last write may be left out.
func (a *applier) replay() (uint64, error) {
	if a.dir == "" {
		return 1, nil
	}
	start := time.Now()
	sc, err := newWALScan(a.s.db, a.dir)
	if err != nil {
		return 0, err
	}
	var batch []*walEntry
	res, err := sc.run(func(entries []*walEntry) error {
		batch = append(batch, entries...)
		if len(batch) < replayBatch {
			return nil
		}
		err := a.writeReplayed(batch)
		batch = batch[:0]
		if err != nil {
			return applyError{err}
		}
		return nil
	})
	if err == nil && res.damage != nil {
		return 0, res.damage
	}
	if err == nil {
		err = a.writeReplayed(batch)
	}
	end := res.end
	if end.before(sc.applied) {
		end = sc.applied
	}
	if err == nil {
		a.ts++
		err = writeMeta(a.s.db, a.ts, map[string][]byte{metaWALApplied: end.encode(), metaWALFormat: {2}})
	}
	if err == nil {
		err = a.s.db.Sync()
	}
	if err != nil {
		return 0, fmt.Errorf("store: replay write-ahead log in %s: %w", a.dir, err)
	}
	if res.tornBytes > 0 {
		a.s.log.Warn("store: left out the unfinished last write of the write-ahead log (it was never acknowledged)", "segment", segmentPath(a.dir, res.tornAt.seg), "offset", res.tornAt.off, "bytes", res.tornBytes)
	}
	for _, n := range res.segs {
		if err := os.Remove(segmentPath(a.dir, n)); err != nil {
			return 0, err
		}
	}
	// A preallocated segment that was never used is not among res.segs.
	if segs, _ := walSegments(a.dir); len(segs) > 0 {
		for _, n := range segs {
			os.Remove(segmentPath(a.dir, n))
		}
	}
	if res.records > 0 {
		a.s.log.Info("store: replayed the write-ahead log", "commits", res.records, "segments", len(res.segs), "took", time.Since(start).Round(time.Millisecond))
	}
	a.pos = end
	return max(end.seg+1, 1), nil
}

// newWALScan reads from Badger how far it holds the log and whether the log was ever
// written in the framed format.
func newWALScan(db *badger.DB, walDir string) (*walScan, error) {
	sc := &walScan{dir: walDir, legacyOK: true}
	txn := db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	if item, err := txn.Get([]byte(metaWALApplied)); err == nil {
		v, err := item.ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		sc.applied, _ = decodeLogPos(v)
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return nil, err
	}
	if _, err := txn.Get([]byte(metaWALFormat)); err == nil {
		sc.legacyOK = false
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return nil, err
	}
	return sc, nil
}

// writeMeta writes the log's own bookkeeping straight into Badger, as version ts.
func writeMeta(db *badger.DB, ts uint64, kv map[string][]byte) error {
	txn := db.NewTransactionAt(math.MaxUint64, true)
	defer txn.Discard()
	for k, v := range kv {
		if err := txn.Set([]byte(k), v); err != nil {
			return err
		}
	}
	return txn.CommitAt(ts, nil)
}

// writeApplied records pos as how far Badger holds the log (repair, which runs alone).
func writeApplied(db *badger.DB, pos logPos) error {
	return writeMeta(db, db.MaxVersion()+1, map[string][]byte{metaWALApplied: pos.encode()})
}

func (a *applier) loop(q *applyQueue) {
	defer close(a.s.applied)
	for {
		// Readers meanwhile find everything in the overlay.
		g, done := q.gather(applyMaxEntries, applyInterval)
		recorded := a.apply(g)
		a.closed = append(a.closed, g.closed...)
		if recorded && len(a.closed) > 0 && !a.keep && a.dir != "" {
			a.removeClosed()
		}
		if done {
			return
		}
	}
}

// removeClosed removes the applied segments in a.closed, oldest first, once Badger's
// copy of them is durable. What it cannot remove now (the sync or a removal failed)
// stays in a.closed, and every segment after it too, for the next batch to retry (or
// the next start to replay): removed past one that stays, the log had a hole, and the
// next start was refused as damaged ("the segment is missing between").
func (a *applier) removeClosed() {
	if a.sync {
		if err := a.syncBadger(); err != nil {
			a.s.log.Error("store: sync badger before removing applied write-ahead log segments", "err", err)
			return
		}
	}
	for i, n := range a.closed {
		if err := os.Remove(segmentPath(a.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			a.s.log.Error("store: remove applied write-ahead log segment", "segment", n, "err", err)
			a.closed = slices.Delete(a.closed, 0, i)
			return
		}
	}
	a.closed = a.closed[:0]
}

// syncBadger makes what the applier wrote to Badger durable.
func (a *applier) syncBadger() error {
	if a.syncFault != nil {
		if err := a.syncFault(); err != nil {
			return err
		}
	}
	return a.s.db.Sync()
}

// apply writes g's entries to Badger and records how far Badger holds the log; recorded
// is false if that record failed.
func (a *applier) apply(g gathered) (recorded bool) {
	recorded = true
	if len(g.entries) == 0 {
		a.coverClosed(g.closed)
		return
	}
	last, elided := a.newest(g.entries, g.maxGen)
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
		return false
	}
	// A segment closed after the batch's last frame held none (its first write
	// failed): the record goes past it too, as coverClosed's does, or its removal
	// below looked like a missing segment at the next start.
	end := g.end
	if len(g.closed) > 0 {
		if c := (logPos{slices.Max(g.closed), segHeaderLen}); end.before(c) {
			end = c
		}
	}
	if !a.keep && a.pos.before(end) {
		a.ts++
		if err := a.record(end); err != nil {
			// Badger holds the batch but does not say so: the segments it closed stay
			// (loop) until a later record covers them, or they would look missing at
			// the next start.
			a.s.log.Warn("store: record how far badger holds the write-ahead log", "err", err)
			recorded = false
		} else {
			a.pos = end
			a.s.appliedTs.Store(a.ts)
		}
	}
	a.s.stats.applied.Add(int64(len(last)))
	a.s.stats.elided.Add(int64(len(elided)))
	a.s.stats.applyBatches.Add(1)
	// An elided delete is as applied as a written one: Badger has no value either way.
	a.s.cache.admit(append(last, elided...))
	return recorded
}

// applyRecordFault, when set (tests only), fails the applier's records of how far
// Badger holds the log.
var applyRecordFault func() error

// record writes pos as how far Badger holds the log, as version a.ts.
func (a *applier) record(pos logPos) error {
	if f := applyRecordFault; f != nil {
		if err := f(); err != nil {
			return err
		}
	}
	return writeMeta(a.s.db, a.ts, map[string][]byte{metaWALApplied: pos.encode()})
}

// coverClosed moves Badger's record of how far it holds the log past segments about to
// be removed that held no entries (one whose first write failed holds only its
// header): the start checks that every segment gone was held by Badger to its end, and
// without this a crash after such a removal was refused as a missing segment.
func (a *applier) coverClosed(closed []uint64) {
	if len(closed) == 0 || a.keep {
		return
	}
	end := logPos{slices.Max(closed), segHeaderLen}
	if !a.pos.before(end) {
		return
	}
	a.ts++
	if err := writeMeta(a.s.db, a.ts, map[string][]byte{metaWALApplied: end.encode()}); err != nil {
		// The segments stay, as after a failed apply: the next start replays them.
		a.s.log.Warn("store: record how far badger holds the write-ahead log", "err", err)
		a.keep = true
		return
	}
	a.pos = end
	a.s.appliedTs.Store(a.ts)
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

// newest keeps the entries that no newer version of their key in this batch replaced
// (one that is durable and of a frame in it, gen <= maxGen), so that Badger after the
// batch holds the log exactly up to its end (walApplied) with one write a key. An entry
// replaced by one not yet durable is written: that one may still fail and be taken
// back. It is how live batches drop repeats without a map of their own: each entry
// knows the one that replaced it (next). Asking only whether the key's newest entry in
// the overlay was in the batch kept every repeat of a key written again after the
// batch's end, which under steady load is every hot key: 2.5 entries a blog view
// reached Badger, for about one key a view that changes. Of those kept, it returns
// apart the deletes of keys Badger never had (see unwritten): they need not reach
// Badger at all.
func (a *applier) newest(entries []*walEntry, maxGen uint64) (write, elided []*walEntry) {
	write = make([]*walEntry, 0, len(entries))
	for _, e := range entries {
		if e.born {
			a.unwritten[e.key] = struct{}{}
		}
		// Dealt with now: an applied entry the cache keeps must not keep every newer
		// version alive through next.
		if n := e.next.Swap(nil); n != nil && n.durable.Load() && n.gen <= maxGen {
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
		a.s.appliedTs.Store(a.ts)
		runtime.Gosched()
	}
	a.s.holdMu.Lock()
	discard := a.ts
	if hold := a.s.backupHold.Load(); hold > 0 && hold < discard {
		discard = hold // a backup is reading this version
	}
	a.s.db.SetDiscardTs(discard)
	a.s.holdMu.Unlock()
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
	// Badger keeps the keys and entries until the commit: one allocation each for the
	// chunk instead of two per entry (the applier's were a tenth of every allocation).
	size := 0
	for _, e := range entries {
		size += len(e.key)
	}
	keys := make([]byte, 0, size)
	bents := make([]badger.Entry, len(entries))
	n := 0
	for i, e := range entries {
		keys = append(keys, e.key...)
		key := keys[len(keys)-len(e.key) : len(keys) : len(keys)]
		var err error
		if e.deleted {
			err = txn.Delete(key)
		} else {
			be := &bents[i]
			be.Key, be.Value, be.ExpiresAt = key, e.val, e.expiresAt
			err = txn.SetEntry(be)
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
