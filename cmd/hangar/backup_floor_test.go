package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// A scheduled backup into a directory on the data directory's own filesystem stops
// before it takes the disk below the free-space floor, and keeps nothing. Before, it
// wrote on to the end: the store then refused every write (507) until an operator
// freed space, and the floor that keeps Badger's mapped files from a full disk (a
// SIGBUS, not an error) was gone. Needs root to mount a tmpfs.
func TestScheduledBackupKeepsTheDataDiskAboveItsFloor(t *testing.T) {
	mnt := smallTmpfs(t)
	const floor = 32 << 20
	opts := store.Options{Dir: filepath.Join(mnt, "data", "db"), SyncWrites: true,
		Logger: slog.New(slog.DiscardHandler), MinFreeBytes: floor}
	st, err := store.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Records that do not compress: the backup of them is some MB.
	for range 8 {
		b := make([]byte, 1<<20)
		rand.Read(b)
		if err := st.PutReconcileReport([]byte(`"` + base64.StdEncoding.EncodeToString(b) + `"`)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Deposit(1, 1); err != nil {
			t.Fatal(err)
		}
	}
	// Reopened, the store holds what was written in Badger and does nothing in the
	// background while the room is measured; written to just now, its log was still
	// filling its next segment with zeroes and removing applied ones (tens of MB on
	// this tmpfs, either way), and the room left below was not what the backup found.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = store.Open(opts); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf countingWriter
	buf.w = io.Discard
	if _, err := st.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	settleFree(t, mnt)
	// Leave the floor and half the backup's size free.
	ballast, err := os.Create(filepath.Join(mnt, "ballast"))
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 1<<20); ; {
		left := freeBytes(t, mnt) - floor - buf.n/2
		if left <= 0 {
			break
		}
		if _, err := ballast.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			t.Fatal(err)
		}
	}
	ballast.Close()
	dir := filepath.Join(mnt, "backups")
	path, _, err := writeBackupFile(context.Background(), st, dir)
	if !errors.Is(err, store.ErrInsufficientStorage) {
		t.Errorf("a backup of %d bytes with %d free above the floor: %v (written to %s)", buf.n, freeBytes(t, mnt)-floor, err, path)
	}
	// The store may still take a few hundred KB of its own meanwhile (its new log
	// segment); a backup written on to its end would leave MBs under the floor.
	if free := freeBytes(t, mnt); free < floor-backupSpaceStep {
		t.Errorf("the backup left %d bytes free, more than %d under the floor of %d", free, backupSpaceStep, int64(floor))
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		t.Errorf("the refused backup left %s", n.Name())
	}
	// A backup directory on another filesystem is not held to the data disk's floor.
	other := filepath.Join(t.TempDir(), "backups")
	if path, _, err := writeBackupFile(context.Background(), st, other); err != nil || !strings.HasPrefix(path, other) {
		t.Errorf("a backup to another filesystem: %s, %v", path, err)
	}
}

// settleFree waits until the free space under path reads the same three times in a
// row, a quarter second apart (at most 30 s).
func settleFree(t *testing.T, path string) {
	t.Helper()
	last, same := freeBytes(t, path), 0
	for deadline := time.Now().Add(30 * time.Second); same < 2 && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		free := freeBytes(t, path)
		if free == last {
			same++
		} else {
			last, same = free, 0
		}
	}
}

func freeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var s syscall.Statfs_t
	if err := syscall.Statfs(path, &s); err != nil {
		t.Fatal(err)
	}
	return int64(s.Bavail) * int64(s.Bsize)
}
