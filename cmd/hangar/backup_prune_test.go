package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// Scheduled backups are named by the wall clock (hangar-YYYYMMDD-HHMMSS.backup) and
// pruned by name. When the clock is stepped back (a machine that ran a day ahead and
// was corrected by NTP, a VPS restored with a wrong RTC), every backup written
// afterwards sorts before the ones written while it was ahead, and pruneBackups deletes
// the backup it has just written: for as long as the clock takes to catch up, the
// backup directory keeps only the stale ones and every fresh snapshot is thrown away
// (one log line says "scheduled backup written", nothing says it was deleted).
func TestScheduledBackupAfterTheClockWasSteppedBackIsKept(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	backups := filepath.Join(dir, "backups")
	if err := os.MkdirAll(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	// Seven backups written while the clock ran a day ahead.
	ahead := time.Now().UTC().Add(24 * time.Hour)
	for i := range 7 {
		name := backupPrefix + ahead.Add(time.Duration(i)*time.Hour).Format("20060102-150405") + ".backup"
		if err := os.WriteFile(filepath.Join(backups, name), []byte("stale"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logs := &hangartest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		scheduleBackups(ctx, st, storageConfig{BackupDir: backups, BackupEvery: 200 * time.Millisecond, BackupKeep: 7},
			slog.New(slog.NewTextHandler(logs, nil)))
	}()
	hangartest.WaitFor(t, 10*time.Second, "a scheduled backup written", func() bool {
		return len(logs.String()) > 0
	})
	cancel()
	<-done
	names, _ := os.ReadDir(backups)
	fresh := 0
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(backups, n.Name())); err == nil && string(b) != "stale" {
			fresh++
		}
	}
	if fresh == 0 {
		t.Fatalf("the backup just written was deleted by the pruning (the directory keeps only the 7 written while the clock was ahead):\n%s", logs.String())
	}
}
