package kv

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// Versions counts every version Badger itself holds of key, tombstones included: what
// reached Badger, as opposed to what readers see. For diagnostics and tests of what
// the applier leaves out.
func (s *DB) Versions(key string) (int, error) {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{AllVersions: true, Prefix: []byte(key)})
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		if string(it.Item().Key()) == key {
			n++
		}
	}
	return n, nil
}

// Settle waits until the applier has taken every commit made before it was called:
// it commits a sentinel key and waits for the applier to admit it, which it does last
// for a batch, and batches go in log order.
func (s *DB) Settle(ctx context.Context) error {
	key := fmt.Sprintf("%ssettle:%d", ReservedPrefix, time.Now().UnixNano())
	if err := s.Update(func(txn *Txn) error { return txn.Set([]byte(key), nil) }); err != nil {
		return err
	}
	s.ovMu.RLock()
	e := s.overlay[key]
	s.ovMu.RUnlock()
	for {
		s.cache.mu.Lock()
		admitted := slices.Contains(s.cache.queue[s.cache.head:], e)
		s.cache.mu.Unlock()
		s.ovMu.RLock()
		admitted = admitted || s.overlay[key] != e // applied and already evicted
		s.ovMu.RUnlock()
		if admitted {
			return s.Update(func(txn *Txn) error { return txn.Delete([]byte(key)) })
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
