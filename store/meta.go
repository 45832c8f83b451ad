package store

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/hangarhq/hangar/store/internal/kv"
)

// migration is one small, ordered step of the schema. Steps are appended, never
// edited or reordered: the schema version recorded in meta is the number of steps run.
type migration struct {
	name string
	run  func(txn *tx) error
}

// migrations is the ordered list run at start. Badger has no tables, so early steps
// only record that the keyspace in keys.go exists; later ones rewrite records.
var migrations = []migration{
	{name: "keyspace v1: ratelimit, inbox, seen, outbox, outlog", run: func(*tx) error { return nil }},
	{name: "keyspace v2: blog views, visitors, comments, inquiries (seed 004)", run: func(*tx) error { return nil }},
	{name: "keyspace v3: orders, balances, ledger, quotes (seed 002)", run: func(*tx) error { return nil }},
	{name: "outlog becomes a ring of OutlogCap slots: drop the id-keyed entries", run: dropPrefix(prefixOutlog)},
	{name: "accounts follow seed 002: balances, ledgers and order windows keyed by user_id, not telegram_user_id", run: moveAccountsToUserID},
	{name: "seen-markers become bits in blocks of 1024 update_ids", run: moveSeenMarkersToBlocks},
}

// dropPrefix deletes every key under prefix (for records a step re-keys and that may
// be lost, such as the display-only outlog).
func dropPrefix(prefix string) func(txn *tx) error {
	return func(txn *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = []byte(prefix)
		it := txn.NewIterator(opts)
		var keys [][]byte
		for it.Rewind(); it.Valid(); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		it.Close()
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}
}

// SchemaVersion returns the number of migrations applied.
func (s *Store) SchemaVersion() (int, error) {
	var v int
	err := s.view(func(txn *tx) error {
		var err error
		v, err = schemaVersion(txn)
		return err
	})
	return v, err
}

func schemaVersion(txn *tx) (int, error) {
	item, err := txn.Get([]byte(metaSchemaVersion))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v int
	err = item.Value(func(b []byte) error {
		v, err = strconv.Atoi(string(b))
		return err
	})
	return v, err
}

func (s *Store) migrate() error {
	return s.update(func(txn *tx) error {
		v, err := schemaVersion(txn)
		if err != nil {
			return fmt.Errorf("store: read schema version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("store: data is at schema %d but this hangar knows %d: refusing to downgrade", v, len(migrations))
		}
		if v == len(migrations) {
			// Nothing written: a start with the disk below the free-space floor must
			// open the store read-only, not fail on a write of what is there already.
			return nil
		}
		for i := v; i < len(migrations); i++ {
			if err := migrations[i].run(txn); err != nil {
				return fmt.Errorf("store: migration %d (%s): %w", i+1, migrations[i].name, err)
			}
			s.log.Info("store migrated", "step", i+1, "name", migrations[i].name)
		}
		return txn.Set([]byte(metaSchemaVersion), []byte(strconv.Itoa(len(migrations))))
	})
}

// MetaFlag reports whether the named one-time flag has been recorded.
func (s *Store) MetaFlag(name string) (bool, error) {
	var ok bool
	err := s.view(func(txn *tx) error {
		var err error
		ok, err = exists(txn, []byte(prefixMeta+name))
		return err
	})
	return ok, err
}

// metaRestored marks a store `hangar restore` wrote, until the start after it has
// reconciled with the providers: the value is the time of the restore (RFC 3339).
const metaRestored = prefixMeta + "restored"

// ErrNewerSchema is RestoreBackup refusing a backup written by a newer hangar: its
// store would not start with this one.
var ErrNewerSchema = errors.New("store: the backup was written by a newer hangar")

// RestoreBackup loads a backup into dir, which must be empty or not exist (Restore),
// refusing one whose schema is newer than this hangar's before anything is kept, and
// marks the restored store: the orders the backup missed may still have servers at
// the providers, labelled with ids the restored order sequence would hand out again,
// so the next start must reconcile before it takes orders (RestoredAt, ClearRestored).
func RestoreBackup(dir string, r io.Reader, now time.Time) (BackupInfo, error) {
	return kv.RestoreWith(dir, r, kv.RestoreOptions{
		Check: func(key, val []byte) error {
			if string(key) != metaSchemaVersion {
				return nil
			}
			v, err := strconv.Atoi(string(val))
			if err != nil {
				return fmt.Errorf("the backup's schema version %q: damaged", val)
			}
			if v > len(migrations) {
				return fmt.Errorf("%w: its data is at schema %d, this hangar knows %d; restore it with the hangar that wrote it (or a newer one)", ErrNewerSchema, v, len(migrations))
			}
			return nil
		},
		Set: map[string][]byte{metaRestored: []byte(now.UTC().Format(time.RFC3339))},
	})
}

// RestoredAt says whether this store was restored from a backup and has not yet been
// reconciled with the providers since (ClearRestored), and when it was restored.
func (s *Store) RestoredAt() (at time.Time, restored bool, err error) {
	err = s.view(func(txn *tx) error {
		item, err := txn.Get([]byte(metaRestored))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		restored = true
		return item.Value(func(b []byte) error {
			at, _ = time.Parse(time.RFC3339, string(b)) // a damaged time is still a restore
			return nil
		})
	})
	return at, restored, err
}

// ClearRestored records that the restored store has been reconciled.
func (s *Store) ClearRestored() error {
	return s.update(func(txn *tx) error { return txn.Delete([]byte(metaRestored)) })
}

// SpaceFor returns ErrInsufficientStorage when writing n more bytes under path (a
// file beside the store, such as a scheduled backup) would take the data directory's
// disk below the free-space floor; a path on another disk is never refused.
func (s *Store) SpaceFor(path string, n int64) error { return s.db.SpaceFor(path, n) }
