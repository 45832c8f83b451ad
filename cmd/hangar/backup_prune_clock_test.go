package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// The prune fix keeps only the backup just written. After the clock was stepped back
// the fresh backups still sort before the seven written while it ran ahead, so at each
// run the previous fresh backup is the oldest by name and is deleted: however many
// runs pass, the directory holds one fresh backup and the seven stale ones, which are
// kept until the clock catches up with them (a day, here). --backup-keep 7 means an
// operator can go back seven runs; after a step back they can go back none.
func TestBackupsAfterAClockStepBackKeepMoreThanTheLastOne(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for three scheduled backups a second apart")
	}
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
		// Names have whole seconds: runs a little over a second apart get names of their own.
		scheduleBackups(ctx, st, storageConfig{BackupDir: backups, BackupEvery: 1100 * time.Millisecond, BackupKeep: 7},
			slog.New(slog.NewTextHandler(logs, nil)))
	}()
	hangartest.WaitFor(t, 20*time.Second, "three scheduled backups written", func() bool {
		return strings.Count(logs.String(), "scheduled backup written") >= 3
	})
	cancel()
	<-done
	names, _ := os.ReadDir(backups)
	var fresh, stale []string
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(backups, n.Name())); err == nil {
			if string(b) == "stale" {
				stale = append(stale, n.Name())
			} else {
				fresh = append(fresh, n.Name())
			}
		}
	}
	if len(fresh) < 3 {
		t.Fatalf("after 3 scheduled backups with --backup-keep 7, %d fresh remain %v beside %d written while the clock was ahead %v",
			len(fresh), fresh, len(stale), stale)
	}
}
