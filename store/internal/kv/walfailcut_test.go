package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// A commit whose fdatasync failed is answered with an error only once its frame was
// cut from the segment: a crash at any moment after the caller heard the error must
// not bring the commit back. The log answered first and cut afterwards (in recover),
// so a crash in between, or a cut that failed (a failing disk) and was being retried,
// replayed the whole, checksummed frame at the next start: a deposit answered 503 and
// retried by its client was then credited twice.
func TestFailedSyncIsCutBeforeItsCommitHearsTheError(t *testing.T) {
	dir := t.TempDir()
	var failSync atomic.Bool
	var s *DB
	var mu sync.Mutex
	var crashed string // the data directory copied just after the error was answered
	fault := func(op, path string) error {
		switch op {
		case "sync":
			if failSync.CompareAndSwap(true, false) {
				return fmt.Errorf("sync %s: %w", path, syscall.EIO)
			}
		case "truncate":
			// The cut is about to happen. If the failure was already counted, the
			// doomed commit may have heard its error: a crash now is a crash after
			// the answer.
			mu.Lock()
			if crashed == "" && s != nil && s.wal.failures.Load() > 0 {
				crashed = filepath.Join(t.TempDir(), "data")
				if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
					t.Error(err)
				}
			}
			mu.Unlock()
		}
		return nil
	}
	var err error
	s, err = Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler), logFault: fault})
	if err != nil {
		t.Fatal(err)
	}
	if err := setKey(s, "before", "1"); err != nil {
		t.Fatal(err)
	}
	failSync.Store(true)
	if err := setKey(s, "doomed", "2"); !errors.Is(err, ErrLogUnavailable) {
		t.Fatalf("commit whose sync failed: %v", err)
	}
	mu.Lock()
	if crashed == "" { // the cut came before the answer: a crash now
		crashed = filepath.Join(t.TempDir(), "data")
		if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Unlock()
	s.Close()

	c, err := openQuiet(crashed)
	if err != nil {
		t.Fatalf("start after the crash: %v", err)
	}
	defer c.Close()
	if got, err := getKey(c, "doomed"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("a commit answered with an error came back after a crash: %q, %v", got, err)
	}
	if got, err := getKey(c, "before"); err != nil || got != "1" {
		t.Fatalf("before = %q, %v", got, err)
	}
}
