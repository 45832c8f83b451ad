package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// ErrNotFound is returned by typed getters when the record does not exist.
var ErrNotFound = errors.New("store: not found")

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
	// Now is the clock used for record timestamps; nil means time.Now.
	Now func() time.Time
	// CacheBytes bounds the recently written and read records kept in memory in front
	// of Badger; 0 means DefaultCacheBytes, negative turns the cache off.
	CacheBytes int

	// applyFault, when set (tests only), runs before each Badger transaction of the
	// applier and fails it with its error: Badger refusing writes (a full disk) on demand.
	applyFault func() error
}

// DefaultCacheBytes is the record cache's default budget.
const DefaultCacheBytes = 32 << 20

// Store is hangar's handle on its Badger database and the write-ahead log in front of it.
type Store struct {
	db  *badger.DB
	log *slog.Logger
	now func() time.Time

	// reqs feeds the committer, which runs commits one at a time: a commit reads and
	// computes in memory, so each is short, and serial commits need no conflict
	// detection or retries.
	reqs          chan *commitReq
	urgent        chan *commitReq // see updateNow
	committerDone chan struct{}
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
}

// Open opens (creating if needed) the database in opts.Dir, replays the write-ahead
// log into it and runs pending migrations.
func Open(opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	bopts := badger.DefaultOptions(opts.Dir).
		WithInMemory(opts.InMemory).
		WithSyncWrites(opts.SyncWrites).
		WithLogger(badgerLogger{opts.Logger}).
		WithNumVersionsToKeep(1).
		// Every write comes from the one applier, in log order: nothing to detect.
		WithDetectConflicts(false).
		// hangar's values are small; smaller tables and memtables keep RSS modest.
		WithMemTableSize(32 << 20).
		WithValueThreshold(1 << 10).
		WithNumCompactors(2)
	walDir := ""
	if opts.InMemory {
		bopts = bopts.WithDir("").WithValueDir("")
	} else {
		walDir = filepath.Join(opts.Dir, walDirName)
	}
	// Managed mode: the applier stamps its own versions and readers never wait on
	// Badger's commit watermark.
	db, err := badger.OpenManaged(bopts)
	if err != nil {
		return nil, fmt.Errorf("store.Open %s: %w", opts.Dir, err)
	}
	s := &Store{
		db:            db,
		log:           opts.Logger,
		now:           opts.Now,
		overlay:       map[string]*walEntry{},
		reqs:          make(chan *commitReq, 1024),
		urgent:        make(chan *commitReq, 1024),
		committerDone: make(chan struct{}),
		applied:       make(chan struct{}),
		seqs:          map[string]*seqLease{},
		stopGC:        make(chan struct{}),
		gcDone:        make(chan struct{}),
	}
	switch {
	case opts.CacheBytes == 0:
		opts.CacheBytes = DefaultCacheBytes
	case opts.CacheBytes < 0:
		opts.CacheBytes = 0
	}
	s.cache = &cache{s: s, budget: opts.CacheBytes}
	ap := &applier{s: s, ts: db.MaxVersion(), dir: walDir, fault: opts.applyFault, unwritten: map[string]struct{}{}}
	next, err := ap.replay()
	if err != nil {
		db.Close()
		return nil, err
	}
	applyQ := newApplyQueue(applyQueueLimit)
	s.wal, err = openWAL(walDir, next, opts.SyncWrites, applyQ, &s.stats)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store.Open %s: %w", walDir, err)
	}
	go ap.loop(applyQ)
	go s.committer()
	if err := s.migrate(); err != nil {
		s.shutdown()
		return nil, err
	}
	go s.gcLoop(opts.InMemory)
	return s, nil
}

// Close writes back sequence leases, applies the log to Badger and closes it. It is
// safe to call once.
func (s *Store) Close() error {
	close(s.stopGC)
	<-s.gcDone
	s.releaseSeqs()
	return s.shutdown()
}

func (s *Store) shutdown() error {
	close(s.urgent)
	close(s.reqs)
	<-s.committerDone
	s.wal.close()
	<-s.applied
	return s.db.Close()
}

// Ping reports whether the database answers a read and the log takes writes.
// A log that failed to write (a full or broken disk) fails it too: the store then
// refuses every write, and /health should say so.
func (s *Store) Ping(context.Context) error {
	if s.db.IsClosed() {
		return ErrClosed
	}
	s.wal.mu.Lock()
	failed := s.wal.failed
	s.wal.mu.Unlock()
	if failed != nil {
		return failed
	}
	return s.view(func(txn *tx) error {
		_, err := txn.Get([]byte(metaSchemaVersion))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		return err
	})
}

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// update runs fn as one commit and returns once the commit is durable. If fn fails
// nothing it wrote is kept. Commits run one at a time on the committer goroutine, which
// goes from one to the next without waiting for durability: the log's writer syncs
// many commits at once and wakes their callers.
func (s *Store) update(fn func(txn *tx) error) error { return s.submit(s.reqs, fn) }

// updateNow is update for a commit a client is waiting on (an update to acknowledge,
// an order to accept, a view to count): it runs before background commits already
// queued (the actors' processing), so that acknowledgements do not queue behind the
// work they start. Background commits still run whenever no acknowledgement waits.
func (s *Store) updateNow(fn func(txn *tx) error) error { return s.submit(s.urgent, fn) }

func (s *Store) submit(q chan *commitReq, fn func(txn *tx) error) (err error) {
	r := &commitReq{op: fn, done: make(chan error, 1), queued: time.Now()}
	defer func() {
		if recover() != nil { // closed by shutdown
			err = ErrClosed
		}
	}()
	q <- r
	err = <-r.done
	if err == nil && !r.published.IsZero() {
		s.stats.durableWait.observe(time.Since(r.published))
	}
	return err
}

// commitReq is one caller's commit waiting for the committer.
type commitReq struct {
	op   func(txn *tx) error
	done chan error
	// queued is when the caller submitted it; published, when its writes went to the
	// log (zero if none did). The caller reads published after done, which the writer
	// sends after reading the log under the lock publish took.
	queued, published time.Time
}

func (s *Store) committer() {
	defer close(s.committerDone)
	urgent, reqs := s.urgent, s.reqs
	for urgent != nil || reqs != nil {
		var r *commitReq
		var ok bool
		select {
		case r, ok = <-urgent:
			if !ok {
				urgent = nil
				continue
			}
		default:
			select {
			case r, ok = <-urgent:
				if !ok {
					urgent = nil
					continue
				}
			case r, ok = <-reqs:
				if !ok {
					reqs = nil
					continue
				}
			}
		}
		if err := s.run(r); err != nil {
			r.done <- err
		}
	}
}

// run executes one commit; on success its caller is answered by the log's writer.
func (s *Store) run(r *commitReq) (err error) {
	t := &tx{s: s, writes: map[string]*walEntry{}}
	defer t.discard()
	defer func() {
		// A panicking commit must not take the committer, and every later commit, with it.
		if p := recover(); p != nil {
			err = fmt.Errorf("store: commit panicked: %v", p)
		}
	}()
	s.stats.queueWait.observe(time.Since(r.queued))
	if err := r.op(t); err != nil {
		return err
	}
	if len(t.writes) == 0 {
		r.done <- nil
		return nil
	}
	r.published = time.Now()
	return s.publish(t.writes, r.done)
}

// publish makes writes visible in the overlay and appends them to the log, in one
// order for both; done (if not nil) hears the log's verdict.
func (s *Store) publish(writes map[string]*walEntry, done chan<- error) error {
	entries := make([]*walEntry, 0, len(writes))
	for _, e := range writes {
		entries = append(entries, e)
	}
	s.wal.mu.Lock()
	defer s.wal.mu.Unlock()
	if err := s.wal.appendLocked(entries, done); err != nil {
		return err
	}
	s.ovMu.Lock()
	for _, e := range entries {
		e.prev.Store(s.overlay[e.key])
		s.overlay[e.key] = e
	}
	s.ovMu.Unlock()
	return nil
}

func (s *Store) view(fn func(txn *tx) error) error {
	if s.db.IsClosed() {
		return ErrClosed
	}
	t := &tx{s: s}
	defer t.discard()
	return fn(t)
}

func (s *Store) gcLoop(inMemory bool) {
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

func getRecord(txn *tx, key []byte, v any) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return decodeRecord(b, v) })
}

func putRecord(txn *tx, key []byte, v any, ttl time.Duration) error {
	b, err := encodeRecord(v)
	if err != nil {
		return err
	}
	return txn.putOwned(key, b, expiry(ttl), false)
}

func exists(txn *tx, key []byte) (bool, error) {
	_, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// scanPrefix calls fn for each value under prefix in key order until fn returns false.
func scanPrefix(txn *tx, prefix string, reverse bool, fn func(key, val []byte) (bool, error)) error {
	opts := badger.DefaultIteratorOptions
	opts.Prefix = []byte(prefix)
	opts.Reverse = reverse
	it := txn.NewIterator(opts)
	defer it.Close()
	seek := []byte(prefix)
	if reverse {
		seek = append([]byte(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	}
	for it.Seek(seek); it.ValidForPrefix([]byte(prefix)); it.Next() {
		item := it.Item()
		var cont bool
		err := item.Value(func(v []byte) error {
			var err error
			cont, err = fn(item.KeyCopy(nil), v)
			return err
		})
		if err != nil {
			return err
		}
		if !cont {
			return nil
		}
	}
	return nil
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
