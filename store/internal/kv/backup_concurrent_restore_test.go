package kv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A second restore into a directory while a first is still loading is refused. Before,
// it deleted the first one's half-built store from under its open Badger and built
// its own there; the first went on writing tables into the second's directory, and
// whichever finished last renamed a store holding parts of both into place.
func TestRestoreRefusedWhileAnotherIntoTheSameDirRuns(t *testing.T) {
	src, err := Open(Options{Dir: t.TempDir(), SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Update(func(txn *Txn) error { return txn.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	var backup bytes.Buffer
	if _, err := src.Backup(context.Background(), &backup); err != nil {
		t.Fatal(err)
	}
	src.Close()

	dir := filepath.Join(t.TempDir(), "data", "db")
	pr, pw := io.Pipe()
	first := make(chan error, 1)
	go func() {
		_, err := Restore(dir, pr)
		first <- err
	}()
	// The first restore has its half-built store open and waits for the rest of the backup.
	if _, err := pw.Write(backup.Bytes()[:len(backupMagic)]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(restoringDir(dir), "MANIFEST")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first restore never opened its store")
		}
	}
	if _, err := Restore(dir, bytes.NewReader(backup.Bytes())); err == nil {
		t.Fatal("a second restore into the same directory succeeded while the first was loading (the first then hangs on its deleted store)")
	}
	go func() {
		pw.Write(backup.Bytes()[len(backupMagic):])
		pw.Close()
	}()
	err = <-first
	pr.Close() // a first restore that gave up reads no more
	if err != nil && !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("the first restore: %v", err)
	}
	db, err := Open(Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("the restored store does not open: %v", err)
	}
	defer db.Close()
	if err := db.View(func(txn *Txn) error { _, err := txn.Get([]byte("k")); return err }); err != nil {
		t.Fatalf("the restored store lacks its key: %v", err)
	}
}
