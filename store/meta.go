package store

import (
	"errors"
	"fmt"
	"strconv"

	badger "github.com/dgraph-io/badger/v4"
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
