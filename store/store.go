package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// ErrNotFound is returned by typed getters when the record does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrClosed is returned once Close has been called.
var ErrClosed = errors.New("store: closed")

// Options configures Open.
type Options struct {
	Dir string
	// InMemory keeps everything in RAM; only for tests that do not restart.
	InMemory bool
	// SyncWrites fsyncs every commit before it returns. Group commit keeps it cheap.
	SyncWrites bool
	Logger     *slog.Logger
	// Now is the clock used for record timestamps; nil means time.Now.
	Now func() time.Time
}

// Store is hangar's handle on its Badger database.
type Store struct {
	db  *badger.DB
	log *slog.Logger
	now func() time.Time
	// Group committers run their batches concurrently, each in its own transaction;
	// callers pick one by the user (or update) they touch, so that concurrent batches
	// rarely read what another writes and Badger's conflict checks rarely fire. The
	// inbox ones take only webhook acceptances, so an acknowledgement never waits
	// behind the actors' processing writes. Badger folds them into shared fsyncs.
	groups []*groupCommitter
	inbox  []*groupCommitter
	group  *groupCommitter // groups[0], for writes with no natural owner
	seqMu  sync.Mutex
	seqs   map[string]*badger.Sequence
	stopGC chan struct{}
	gcDone chan struct{}
}

// Open opens (creating if needed) the database in opts.Dir and runs pending migrations.
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
		// hangar's values are small; smaller tables and memtables keep RSS modest.
		WithMemTableSize(32 << 20).
		WithValueThreshold(1 << 10).
		WithNumCompactors(2)
	if opts.InMemory {
		bopts = bopts.WithDir("").WithValueDir("")
	}
	db, err := badger.Open(bopts)
	if err != nil {
		return nil, fmt.Errorf("store.Open %s: %w", opts.Dir, err)
	}
	s := &Store{
		db:     db,
		log:    opts.Logger,
		now:    opts.Now,
		seqs:   map[string]*badger.Sequence{},
		stopGC: make(chan struct{}),
		gcDone: make(chan struct{}),
	}
	for range commitShards {
		s.groups = append(s.groups, newGroupCommitter(s, 256))
	}
	for range inboxShards {
		s.inbox = append(s.inbox, newGroupCommitter(s, 256))
	}
	s.group = s.groups[0]
	if err := s.migrate(); err != nil {
		s.stopCommitters()
		db.Close()
		return nil, err
	}
	go s.gcLoop(opts.InMemory)
	return s, nil
}

// Close flushes sequences and closes the database. It is safe to call once.
func (s *Store) Close() error {
	close(s.stopGC)
	<-s.gcDone
	s.stopCommitters()
	s.seqMu.Lock()
	for _, q := range s.seqs {
		_ = q.Release()
	}
	s.seqMu.Unlock()
	return s.db.Close()
}

// Measured with `make bench`: more committers acknowledge webhooks faster (12k/s with
// 4 + 2) but starve the actors' processing commits, because every Badger transaction
// waits for the commits before it; the backlog then grows for as long as the load
// lasts. One of each keeps processing level with acknowledgement.
const (
	commitShards = 1
	inboxShards  = 1
)

func (s *Store) stopCommitters() {
	for _, g := range append(s.groups, s.inbox...) {
		g.stop()
	}
}

// groupFor is the committer of everything owned by one user.
func (s *Store) groupFor(user int64) *groupCommitter {
	return s.groups[uint64(user)%uint64(len(s.groups))]
}

// Ping reports whether the database answers a read.
func (s *Store) Ping(context.Context) error {
	if s.db.IsClosed() {
		return ErrClosed
	}
	return s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte(metaSchemaVersion))
		return err
	})
}

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

const maxConflictRetries = 16

// update runs fn in a read-write transaction, re-running it when a concurrent
// transaction committed a conflicting write first (Badger's optimistic concurrency).
func (s *Store) update(fn func(txn *badger.Txn) error) error {
	var err error
	for attempt := 0; attempt < maxConflictRetries; attempt++ {
		err = s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Microsecond)
	}
	return fmt.Errorf("store: gave up after %d conflicts: %w", maxConflictRetries, err)
}

func (s *Store) view(fn func(txn *badger.Txn) error) error { return s.db.View(fn) }

// nextSeq returns the next number of the named monotonic sequence.
func (s *Store) nextSeq(name string) (uint64, error) {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	q, ok := s.seqs[name]
	if !ok {
		var err error
		q, err = s.db.GetSequence(seqKey(name), 1000)
		if err != nil {
			return 0, err
		}
		s.seqs[name] = q
	}
	n, err := q.Next()
	// Sequence 0 is reserved so that a zero id always means "unset".
	if err == nil && n == 0 {
		n, err = q.Next()
	}
	return n, err
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

func getJSON(txn *badger.Txn, key []byte, v any) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

func setJSON(txn *badger.Txn, key []byte, v any, ttl time.Duration) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e := badger.NewEntry(key, b)
	if ttl > 0 {
		e = e.WithTTL(ttl)
	}
	return txn.SetEntry(e)
}

func exists(txn *badger.Txn, key []byte) (bool, error) {
	_, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// scanPrefix calls fn for each value under prefix in key order until fn returns false.
func scanPrefix(txn *badger.Txn, prefix string, reverse bool, fn func(key, val []byte) (bool, error)) error {
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
