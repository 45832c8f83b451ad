package kv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// ErrClosed is returned once Close has been called.
var ErrClosed = errors.New("store: closed")

// ErrInsufficientStorage is returned for every write while the data directory's
// filesystem has less free space than Options.MinFreeBytes (or the log's writes fail
// with ENOSPC). Reads keep working; writes are taken again by themselves once space is
// back. The HTTP API answers it with 507 insufficient_storage.
var ErrInsufficientStorage = errors.New("store: not enough free disk space; refusing writes until space is freed")

// ErrLogUnavailable is returned for writes while the write-ahead log cannot write or
// sync (an I/O error): nothing is acknowledged until it can again. The HTTP API
// answers it with 503 store_unavailable.
var ErrLogUnavailable = errors.New("store: the write-ahead log cannot write to disk; refusing writes until it can")

// Options configures Open.
type Options struct {
	Dir string
	// InMemory keeps everything in RAM; only for tests that do not restart.
	InMemory bool
	// SyncWrites fdatasyncs the write-ahead log before a commit returns (commits that
	// arrive meanwhile share the sync) and syncs Badger's own writes behind it.
	SyncWrites bool
	Logger     *slog.Logger
	// CacheBytes bounds the recently written and read records kept in memory in front
	// of Badger; 0 means DefaultCacheBytes, negative turns the cache off.
	CacheBytes int

	// MinFreeBytes is the free-space floor of the data directory's filesystem: below
	// it every write is refused with ErrInsufficientStorage (reads go on), and writes are
	// taken again by themselves once space is back. 0 turns the check off.
	MinFreeBytes int64

	// applyFault, when set (tests only), runs before each Badger transaction of the
	// applier and fails it with its error: Badger refusing writes (a full disk) on demand.
	applyFault func() error
	// badgerSyncFault, when set (tests only), runs before the applier syncs Badger ahead
	// of removing applied log segments, and fails the sync with its error.
	badgerSyncFault func() error
	// logFault, when set (tests only), runs before each operation on a log file ("create",
	// "write", "sync", "truncate") and fails it with its error.
	logFault func(op, path string) error
	// freeSpace, when set (tests only), replaces statfs of the data directory.
	freeSpace func() (uint64, error)
	// badgerOptions, when set (tests only), adjusts Badger's options after hangar's:
	// the upgrade test opens a store the way an earlier release did.
	badgerOptions func(badger.Options) badger.Options
}

// DefaultCacheBytes is the record cache's default budget.
const DefaultCacheBytes = 32 << 20

// DB is Badger with the write-ahead log in front of it.
type DB struct {
	db  *badger.DB
	log *slog.Logger

	// commits runs commits one at a time (commit.go): a commit reads and computes in
	// memory, so each is short, and serial commits need no conflict detection or retries.
	commits commits
	// overlay holds every committed entry Badger does not have yet (see tx.go).
	ovMu    sync.RWMutex
	overlay map[string]*walEntry
	wal     *wal
	stats   logCounters
	cache   *cache
	applied chan struct{} // closed when the applier has drained the log at Close

	seqMu  sync.Mutex
	seqs   map[string]*seqLease
	stopGC chan struct{}
	gcDone chan struct{}

	space *spaceMonitor
	// appliedTs is the newest Badger version the applier has committed; backupHold,
	// when not 0, a version a backup is reading, which compaction must keep.
	appliedTs  atomic.Uint64
	backupHold atomic.Uint64
	holdMu     sync.Mutex // orders setting backupHold with the applier's SetDiscardTs

	// backups are the backups streaming now. Close stops them (stopBackups) and waits
	// for them before it closes Badger, whose tables they read: closed under a
	// backup's iterator, the process died of a fault in the unmapped tables.
	backupsMu     sync.Mutex
	backupsClosed bool
	backups       sync.WaitGroup
	backupsStop   context.Context
	stopBackups   context.CancelFunc
}

// backupStopWait is how long Close waits for a backup to stop: one whose client
// stopped reading can be stuck in a write. Past it Badger is left open (the process
// is ending; the log replays whatever Badger lacks at the next start).
const backupStopWait = 3 * time.Second

// dirWAL is where the write-ahead log of a data directory lives.
func dirWAL(dir string) string { return filepath.Join(dir, walDirName) }

// openBadger opens the database in opts.Dir with hangar's settings, in managed mode:
// the applier stamps its own versions and readers never wait on Badger's commit
// watermark.
func openBadger(opts Options) (*badger.DB, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	bopts := badger.DefaultOptions(opts.Dir).
		WithInMemory(opts.InMemory).
		WithSyncWrites(opts.SyncWrites).
		WithLogger(badgerLogger{logger}).
		WithNumVersionsToKeep(1).
		// Every write comes from the one applier, in log order: nothing to detect.
		WithDetectConflicts(false).
		// hangar's values are small; smaller tables and memtables keep RSS modest, and
		// smaller value log files keep what Badger maps ahead of its writes (twice the
		// file size, which a full disk turns into SIGBUS) well under the free-space floor.
		WithMemTableSize(32 << 20).
		WithValueLogFileSize(64 << 20).
		WithValueThreshold(1 << 10).
		WithNumCompactors(2).
		// Tables uncompressed, and no block cache: Badger then reads blocks straight
		// from its memory-mapped tables. With Snappy it must decompress each block it
		// reads into a copy, and keeps the copies in a block cache of 256 MiB by
		// default, on the Go heap (no jemalloc here): reading 300,000 records of 600
		// bytes once, after a restart, grew the live heap from 44 to 252 MiB, at serve's
		// default memory limit; now it does not grow, and the reads took 1.1 s
		// instead of 2.3 s. Flushing a memtable no longer compresses it into buffers of
		// its own either: a serve accepting orders at full speed peaked at a live heap
		// of 200-206 MB with 15 collections, against 236-247 MB and 23-28 (under its
		// 256 MiB limit). The price is disk: hangar's records take about twice the
		// space in tables (16.3 against 7.9 MB for 20,000 orders, 60,000 views and
		// their ledger). Tables written compressed before stay readable (Badger records
		// each table's compression) and are rewritten uncompressed by compaction.
		WithCompression(options.None).
		WithBlockCacheSize(0)
	if opts.badgerOptions != nil {
		bopts = opts.badgerOptions(bopts)
	}
	if opts.InMemory {
		bopts = bopts.WithDir("").WithValueDir("")
	}
	db, err := badger.OpenManaged(bopts)
	if err != nil {
		return nil, fmt.Errorf("store.Open %s: %w", opts.Dir, err)
	}
	return db, nil
}

func nowStamp() string { return time.Now().UTC().Format("20060102-150405") }

// Open opens (creating if needed) the database in opts.Dir and replays the
// write-ahead log into it.
func Open(opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	walDir := ""
	if !opts.InMemory {
		walDir = dirWAL(opts.Dir)
		if _, err := os.Stat(restoringDir(opts.Dir)); err == nil {
			return nil, fmt.Errorf("%w (%s holds its half-built store)", ErrRestoreInterrupted, restoringDir(opts.Dir))
		}
	}
	// Badger's own write-ahead log is not synced after each of the applier's writes:
	// hangar's log is what makes a commit durable, and it keeps a segment until Badger's
	// copy of it has been synced (applier.loop), once per segment instead of once per
	// Badger transaction (an msync each, 1.3 % of the views' CPU).
	bopts := opts
	bopts.SyncWrites = false
	db, err := openBadger(bopts)
	if err != nil {
		return nil, err
	}
	s := &DB{
		db:      db,
		log:     opts.Logger,
		overlay: map[string]*walEntry{},
		applied: make(chan struct{}),
		seqs:    map[string]*seqLease{},
		stopGC:  make(chan struct{}),
		gcDone:  make(chan struct{}),
	}
	s.backupsStop, s.stopBackups = context.WithCancel(context.Background())
	switch {
	case opts.CacheBytes == 0:
		opts.CacheBytes = DefaultCacheBytes
	case opts.CacheBytes < 0:
		opts.CacheBytes = 0
	}
	s.cache = &cache{s: s, budget: opts.CacheBytes}
	ap := &applier{s: s, ts: db.MaxVersion(), dir: walDir, sync: opts.SyncWrites, fault: opts.applyFault, syncFault: opts.badgerSyncFault, unwritten: map[string]struct{}{}}
	s.appliedTs.Store(ap.ts)
	next, err := ap.replay()
	if err != nil {
		db.Close()
		return nil, err
	}
	applyQ := newApplyQueue(applyQueueLimit)
	s.space = newSpaceMonitor(opts.Dir, opts.MinFreeBytes, opts.freeSpace, opts.InMemory, opts.Logger)
	s.wal = &wal{dir: walDir, sync: opts.SyncWrites, log: opts.Logger, stats: &s.stats, applyQ: applyQ,
		fault: opts.logFault, rollback: s.rollback, room: s.space.room, written: s.space.written}
	if err := openWAL(s.wal, next, 0); err != nil {
		db.Close()
		return nil, fmt.Errorf("store.Open %s: %w", walDir, err)
	}
	s.space.start(s.wal)
	go ap.loop(applyQ)
	go s.gcLoop(opts.InMemory)
	return s, nil
}

// Close writes back sequence leases, applies the log to Badger and closes it. It is
// safe to call once.
func (s *DB) Close() error {
	close(s.stopGC)
	<-s.gcDone
	return s.shutdown()
}

func (s *DB) shutdown() error {
	stopped := s.endBackups()
	s.stopCommits()
	// Only once no commit runs or can start: a number handed out after its
	// sequence was written back was used by a commit still running, and handed out
	// again after the restart.
	s.releaseSeqs()
	s.space.stop()
	s.wal.close()
	<-s.applied
	if !stopped {
		s.log.Error("store: a backup did not stop within its wait (a client not reading?); Badger is left open, the log replays what it lacks at the next start",
			"waited", backupStopWait)
		return nil
	}
	return s.db.Close()
}

// endBackups refuses new backups, stops those streaming and waits for them; false if
// one is still running after backupStopWait.
func (s *DB) endBackups() bool {
	s.backupsMu.Lock()
	s.backupsClosed = true
	s.backupsMu.Unlock()
	s.stopBackups()
	done := make(chan struct{})
	go func() {
		s.backups.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(backupStopWait):
		return false
	}
}

// Ping reports whether the database is open and the log takes writes. A log that
// cannot write (a full or broken disk) fails it: writes are refused meanwhile.
func (s *DB) Ping(context.Context) error {
	if s.db.IsClosed() {
		return ErrClosed
	}
	return s.wal.state()
}

// publish makes entries (one per key) visible in the overlay and appends them to the
// log, in one order for both; done (if not nil) hears the log's verdict. epoch is the log's
// failure count when the commit began.
func (s *DB) publish(entries []*walEntry, done chan<- error, epoch uint64) error {
	s.wal.mu.Lock()
	defer s.wal.mu.Unlock()
	if err := s.wal.appendLocked(entries, done, epoch); err != nil {
		return err
	}
	s.ovMu.Lock()
	for _, e := range entries {
		p := s.overlay[e.key]
		e.prev.Store(p)
		if p != nil && !p.applied {
			p.next.Store(e)
		}
		s.overlay[e.key] = e
	}
	s.ovMu.Unlock()
	return nil
}

// rollback takes the entries of failed commits back out of the overlay, newest first,
// so that each key shows again what it showed before them. An entry restored that was
// already applied and evicted stays in the overlay (its value is Badger's): a failed
// write is rare, and the few keys it touched cost a few bytes each.
func (s *DB) rollback(entries []*walEntry) {
	s.ovMu.Lock()
	defer s.ovMu.Unlock()
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if s.overlay[e.key] != e {
			continue
		}
		if p := e.prev.Load(); p != nil {
			p.next.CompareAndSwap(e, nil)
			s.overlay[e.key] = p
		} else {
			delete(s.overlay, e.key)
		}
	}
}

// View runs fn as a read-only view: it sees only what is durable.
func (s *DB) View(fn func(txn *Txn) error) error {
	if s.db.IsClosed() {
		return ErrClosed
	}
	t := &Txn{s: s}
	defer t.discard()
	return fn(t)
}

func (s *DB) gcLoop(inMemory bool) {
	defer close(s.gcDone)
	if inMemory {
		<-s.stopGC
		return
	}
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-t.C:
			for s.db.RunValueLogGC(0.5) == nil {
			}
		}
	}
}

type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	b.l.Error(fmt.Sprintf(f, a...), "component", "badger")
}
func (b badgerLogger) Warningf(f string, a ...any) {
	b.l.Warn(fmt.Sprintf(f, a...), "component", "badger")
}
func (b badgerLogger) Infof(f string, a ...any) {
	b.l.Debug(fmt.Sprintf(f, a...), "component", "badger")
}
func (b badgerLogger) Debugf(f string, a ...any) {}
