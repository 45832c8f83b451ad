package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A scheduled backup cut off by a crash (SIGKILL, a power loss) leaves its temporary
// file behind, a whole backup's size each time, and pruning only ever looked at
// finished backups: they piled up on the backup disk for good. The next run of the
// schedule deletes them (a daemon has one schedule on its directory).
func TestScheduledBackupsDeleteTheTemporaryFilesACrashLeft(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	backups := filepath.Join(dir, "backups")
	if err := os.MkdirAll(backups, 0o700); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(backups, ".partial-123456")
	if err := os.WriteFile(left, []byte("HGRBAK01\nhalf a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An operator's own files in the directory are not the schedule's to delete.
	mine := filepath.Join(backups, "pre-upgrade.backup.partial")
	if err := os.WriteFile(mine, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One another daemon sharing the directory is writing now: locked, it stays.
	held := filepath.Join(backups, ".partial-writing")
	hf, err := os.Create(held)
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	if err := unix.Flock(int(hf.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		scheduleBackups(ctx, st, storageConfig{BackupDir: backups, BackupEvery: 20e6, BackupKeep: 3}, slog.New(slog.DiscardHandler))
	}()
	hangartest.WaitFor(t, 20e9, "a scheduled backup", func() bool {
		names, _ := os.ReadDir(backups)
		for _, n := range names {
			if strings.HasSuffix(n.Name(), ".backup") && isScheduledBackup(n.Name()) {
				return true
			}
		}
		return false
	})
	cancel()
	<-done
	if _, err := os.Stat(left); err == nil {
		t.Errorf("the temporary file a crashed backup left is still there")
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("a backup being written by another process was deleted: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the operator's file was deleted: %v", err)
	}
}
