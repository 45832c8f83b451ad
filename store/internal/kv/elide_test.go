package kv

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// badgerVersions counts every version Badger holds of key, tombstones included.
func badgerVersions(t *testing.T, s *DB, key string) int {
	t.Helper()
	n, err := s.Versions(key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func setBorn(s *DB, key, val string) error {
	return s.Update(func(txn *Txn) error {
		if err := txn.Set([]byte(key), []byte(val)); err != nil {
			return err
		}
		txn.MarkBorn([]byte(key))
		return nil
	})
}

func deleteKey(s *DB, key string) error {
	return s.Update(func(txn *Txn) error { return txn.Delete([]byte(key)) })
}

// waitApplied waits until the applier has taken every commit made so far: it commits
// a sentinel and waits for the sentinel's entry to be admitted to the cache, which the
// applier does last for a batch, and batches go in log order.
func waitApplied(t *testing.T, s *DB) {
	t.Helper()
	sentinels++
	key := fmt.Sprintf("sentinel:%d", sentinels)
	if err := setKey(s, key, "x"); err != nil {
		t.Fatal(err)
	}
	s.ovMu.RLock()
	e := s.overlay[key]
	s.ovMu.RUnlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		// The cache keeps a copy of what it admits (cache.detach), which replaces the
		// entry in the overlay before it joins the queue.
		s.cache.mu.Lock()
		s.ovMu.RLock()
		cur := s.overlay[key]
		s.ovMu.RUnlock()
		queued := s.cache.queue[s.cache.head:]
		admitted := slices.Contains(queued, e) || cur != e && (cur == nil || slices.Contains(queued, cur))
		s.cache.mu.Unlock()
		if admitted {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the applier did not take the commits in 10s")
		}
	}
}

var sentinels int

func TestDeleteOfABornKeyNeverReachesBadger(t *testing.T) {
	tests := []struct {
		name string
		// run commits to key; applied between steps when apart is set
		steps []func(s *DB, key string) error
		apart bool
		// what Badger must hold of the key in the end, and whether a delete was elided
		wantVersions int
		wantElided   bool
	}{
		{
			name:         "born and deleted in one batch: nothing reaches Badger",
			steps:        []func(*DB, string) error{bornStep, deleteStep},
			wantVersions: 0, wantElided: true,
		},
		{
			name:         "born, rewritten, deleted in one batch: nothing reaches Badger",
			steps:        []func(*DB, string) error{bornStep, setStep, deleteStep},
			wantVersions: 0, wantElided: true,
		},
		{
			name:         "born set applied first: the delete must reach Badger",
			steps:        []func(*DB, string) error{bornStep, deleteStep},
			apart:        true,
			wantVersions: 2, wantElided: false,
		},
		{
			name:         "not born: the delete reaches Badger even in one batch",
			steps:        []func(*DB, string) error{setStep, deleteStep},
			wantVersions: 1, wantElided: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := quietOpen(t, dir)
			key := "elide:" + tt.name
			// A batch opens with its first commit and gathers for applyInterval: start
			// one with the steps, not at the tail of the migrations' batch.
			waitApplied(t, s)
			before := s.LogStats()
			for _, step := range tt.steps {
				if err := step(s, key); err != nil {
					t.Fatal(err)
				}
				if tt.apart {
					waitApplied(t, s)
				}
			}
			waitApplied(t, s)
			if got := badgerVersions(t, s, key); got != tt.wantVersions {
				t.Errorf("Badger holds %d versions of the key, want %d", got, tt.wantVersions)
			}
			if elided := s.LogStats().Elided - before.Elided; (elided > 0) != tt.wantElided {
				t.Errorf("elided %d deletes, want elided=%v", elided, tt.wantElided)
			}
			if _, err := getKey(s, key); !errors.Is(err, badger.ErrKeyNotFound) {
				t.Fatalf("read of the deleted key: %v, want not found", err)
			}
			s.Close()
			s = quietOpen(t, dir)
			defer s.Close()
			if _, err := getKey(s, key); !errors.Is(err, badger.ErrKeyNotFound) {
				t.Fatalf("after a restart, read of the deleted key: %v, want not found", err)
			}
		})
	}
}

func bornStep(s *DB, key string) error   { return setBorn(s, key, "born") }
func setStep(s *DB, key string) error    { return setKey(s, key, "again") }
func deleteStep(s *DB, key string) error { return deleteKey(s, key) }

// A delete of a key that is live in Badger must reach it, even when a later commit in
// the same batch sets it again: only the newest entry is written, and it is not born.
func TestDeleteOverALiveValueAlwaysReachesBadger(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if err := setKey(s, "live", "old"); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, s)
	for i, step := range []func(*DB, string) error{deleteStep, setStep, deleteStep} {
		if err := step(s, "live"); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	waitApplied(t, s)
	s.cache.mu.Lock()
	applied := slices.Clone(s.cache.queue[s.cache.head:])
	s.cache.mu.Unlock()
	s.cache.evict(applied) // read from Badger, not the cache
	if v, err := getKey(s, "live"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("Badger still answers %q, %v for the deleted key", v, err)
	}
}

// Orders and their notes: a new order's pending-index entry and a new message's outbox
// entry are born. Moved on (and sent) within one applier batch, they leave nothing in
// Badger — no tombstone per order under the index prefix the dispatcher scans at start.
