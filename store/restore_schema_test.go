package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A backup written by a newer hangar (its schema has steps this one does not know) is
// refused by the restore itself, and nothing is kept: before, the restore succeeded
// and only `hangar serve` on the restored directory refused it, leaving the operator a
// directory that no hangar at hand starts.
func TestRestoreRefusesABackupFromANewerSchema(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	if _, err := s.Deposit(7, 100); err != nil {
		t.Fatal(err)
	}
	if err := s.update(func(txn *tx) error {
		return txn.Set([]byte(metaSchemaVersion), []byte(strconv.Itoa(len(migrations)+1)))
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	s.Close()

	dir := filepath.Join(t.TempDir(), "db")
	_, err := RestoreBackup(dir, bytes.NewReader(buf.Bytes()), time.Now())
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("restore of a backup at schema %d (this hangar knows %d): %v", len(migrations)+1, len(migrations), err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused restore left %s: %v", dir, err)
	}
	if _, err := os.Stat(restoringPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused restore left its half-built store: %v", err)
	}
}

// A store RestoreBackup wrote says it was restored until ClearRestored, across a
// restart; a store opened fresh never does.
func TestRestoredStoreIsMarkedUntilCleared(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	if _, _, err := s.RestoredAt(); err != nil {
		t.Fatal(err)
	}
	if _, restored, _ := s.RestoredAt(); restored {
		t.Fatal("a fresh store says it was restored")
	}
	var buf bytes.Buffer
	if _, err := s.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dir := filepath.Join(t.TempDir(), "db")
	when := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if _, err := RestoreBackup(dir, &buf, when); err != nil {
		t.Fatal(err)
	}
	r := quietOpen(t, dir)
	at, restored, err := r.RestoredAt()
	if err != nil || !restored || !at.Equal(when) {
		t.Fatalf("restored store: at %v restored %v err %v", at, restored, err)
	}
	r.Close()
	r = quietOpen(t, dir)
	if _, restored, _ := r.RestoredAt(); !restored {
		t.Fatal("the mark is gone after a restart without a reconcile")
	}
	if err := r.ClearRestored(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r = quietOpen(t, dir)
	defer r.Close()
	if _, restored, _ := r.RestoredAt(); restored {
		t.Fatal("the mark is back after ClearRestored and a restart")
	}
}

func restoringPath(dir string) string { return filepath.Clean(dir) + ".restoring" }
