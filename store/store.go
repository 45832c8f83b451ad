package store

import (
	"context"
	"errors"
	"github.com/hangarhq/hangar/internal/dayfilter"
	"io"
	"log/slog"
	"os"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/hangarhq/hangar/store/internal/kv"
)

// ErrNotFound is returned by typed getters when the record does not exist.
var ErrNotFound = errors.New("store: not found")

// The commit engine's errors, for callers of the store.
var (
	// ErrClosed is returned once Close has been called.
	ErrClosed = kv.ErrClosed
	// ErrInsufficientStorage is returned for every write while the data directory's
	// filesystem has less free space than Options.MinFreeBytes (or the log's writes fail
	// with ENOSPC). Reads keep working; writes are taken again by themselves once space
	// is back. The HTTP API answers it with 507 insufficient_storage.
	ErrInsufficientStorage = kv.ErrInsufficientStorage
	// ErrLogUnavailable is returned for writes while the write-ahead log cannot write or
	// sync (an I/O error): nothing is acknowledged until it can again. The HTTP API
	// answers it with 503 store_unavailable.
	ErrLogUnavailable = kv.ErrLogUnavailable
	// ErrNotEmpty is Restore refusing a directory that already holds something.
	ErrNotEmpty = kv.ErrNotEmpty
)

// What the commit engine reports, under the store's name.
type (
	LogStats       = kv.LogStats
	LatencyHist    = kv.LatencyHist
	Storage        = kv.Storage
	BackupInfo     = kv.BackupInfo
	RepairReport   = kv.RepairReport
	LogDamageError = kv.LogDamageError
)

// DefaultCacheBytes is the record cache's default budget; DefaultMinFreeBytes the
// free-space floor `hangar serve` keeps by default.
const (
	DefaultCacheBytes   = kv.DefaultCacheBytes
	DefaultMinFreeBytes = kv.DefaultMinFreeBytes
)

// LatencyBound is the upper bound of a LatencyHist bucket.
func LatencyBound(i int) time.Duration { return kv.LatencyBound(i) }

// TuneProcs gives the Go scheduler one processor more than its default (see
// kv.TuneProcs) and returns the number in effect.
func TuneProcs() int { return kv.TuneProcs() }

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
	// MinFreeBytes is the free-space floor of the data directory's filesystem: below
	// it every write is refused with ErrInsufficientStorage. 0 turns the check off.
	MinFreeBytes int64
}

// Store is hangar's records: the keyspace (keys.go), one file per record kind, the
// schema's migrations (meta.go), on top of the commit engine in internal/kv.
type Store struct {
	db  *kv.DB
	log *slog.Logger
	now func() time.Time
	// sshKeys is which users have a public key stored (see sshkeys.go), loaded at
	// Open, so that creating a server for a user with none reads nothing.
	sshKeys userSet
	// languages is which users have a language record (see languages.go), loaded at
	// Open, so that the notes of a user with none read nothing.
	languages userSet
	// readers rules out reader records that cannot exist (see readerfilter.go).
	readers dayfilter.Filter
	// seen rules out update_ids with no seen-marker (see seen.go).
	seen seenFilter
	// known rules out users with no record and no window (see knownusers.go).
	known knownUsers
	// capped is where each capped log's entries may still begin (see appendCapped).
	capped cappedLows
}

// tx is one commit's (or view's) reads and writes.
type tx = kv.Txn

// Open opens (creating if needed) the database in opts.Dir, replays the write-ahead
// log into it and runs pending migrations.
func Open(opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db, err := kv.Open(kv.Options{Dir: opts.Dir, InMemory: opts.InMemory, SyncWrites: opts.SyncWrites,
		Logger: opts.Logger, CacheBytes: opts.CacheBytes, MinFreeBytes: opts.MinFreeBytes})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, log: opts.Logger, now: opts.Now}
	// Migrations first; then the in-memory sets that spare reads of records that do
	// not exist, loaded from what the migrations left.
	steps := []func() error{s.migrate,
		func() error { return s.loadUserSet(&s.sshKeys, prefixSSHKey) },
		func() error { return s.loadUserSet(&s.languages, prefixLanguage) },
		s.loadReaders, s.loadSeen, s.loadKnownUsers}
	for _, step := range steps {
		if err := step(); err != nil {
			db.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close applies the log to Badger and closes it. It is safe to call once.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers a read and the log takes writes. A log
// that cannot write (a full or broken disk) fails it: the store then refuses every
// write, and /health says so.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.Ping(ctx); err != nil {
		return err
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

// Storage reports the disk's state (free space, the floor, why writes are refused).
func (s *Store) Storage() Storage { return s.db.Storage() }

// LogStats is what the write path has done since Open.
func (s *Store) LogStats() LogStats { return s.db.LogStats() }

// Backup writes a consistent snapshot of the store to w (kv.DB.Backup).
func (s *Store) Backup(ctx context.Context, w io.Writer) (BackupInfo, error) {
	return s.db.Backup(ctx, w)
}

// Restore loads a backup into dir, which must be empty or not exist.
func Restore(dir string, r io.Reader) (BackupInfo, error) { return kv.Restore(dir, r) }

// VerifyBackup checks a whole backup stream as Restore would, storing nothing.
func VerifyBackup(r io.Reader) (BackupInfo, error) { return kv.VerifyBackup(r) }

// Repair cuts dir's damaged write-ahead log at the damage, keeping copies, and reports
// what was lost; only `hangar repair` calls it, with hangar stopped.
func Repair(dir string, out io.Writer) (RepairReport, error) { return kv.Repair(dir, out) }

// update runs fn as one commit and returns once it is durable (kv.DB.Update).
func (s *Store) update(fn func(txn *tx) error) error { return s.db.Update(fn) }

// updateNow is update for a commit a client is waiting on: it goes before queued
// background commits (kv.DB.UpdateNow).
func (s *Store) updateNow(fn func(txn *tx) error) error { return s.db.UpdateNow(fn) }

// view reads what is durable.
func (s *Store) view(fn func(txn *tx) error) error { return s.db.View(fn) }

// nextSeq returns the next number of the named sequence; never zero.
func (s *Store) nextSeq(name string) (uint64, error) { return s.db.NextSeq(string(seqKey(name))) }

// expiry is the absolute expiry of a TTL set now, as Badger computes it; 0 for none.
func expiry(ttl time.Duration) uint64 {
	if ttl <= 0 {
		return 0
	}
	return uint64(time.Now().Add(ttl).Unix())
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
	return txn.PutOwned(key, b, expiry(ttl), false)
}

// putListed is putRecord for a record that is only ever listed by its prefix, never
// read by its key (a ledger line, a message log slot): the record cache does not keep
// it once Badger has it (kv's MarkUncached), so that the budget goes to records that
// are read.
func putListed(txn *tx, key []byte, v any) error {
	if err := putRecord(txn, key, v, 0); err != nil {
		return err
	}
	txn.MarkUncached(key)
	return nil
}

// setListed is txn.Set for such a record (a visitor-log slot, an index entry).
func setListed(txn *tx, key, val []byte) error {
	if err := txn.Set(key, val); err != nil {
		return err
	}
	txn.MarkUncached(key)
	return nil
}

func exists(txn *tx, key []byte) (bool, error) {
	_, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// scanKeys calls fn with each key under prefix, reading no values. The key is only
// valid during the call.
func scanKeys(txn *tx, prefix string, fn func(key []byte)) error {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = []byte(prefix)
	it := txn.NewIterator(opts)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		fn(it.Item().Key())
	}
	return nil
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
