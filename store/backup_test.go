package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A backup taken while deposits keep coming holds every deposit acknowledged before it
// began, and restores into a store where each balance equals its ledger.
func TestBackupUnderLoadRestoresConsistently(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	const users, writers = 50, 8
	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		before = map[int64]int64{} // per user: deposits acknowledged before the backup began
		begun  atomic.Bool
		total  atomic.Int64
	)
	for w := range writers {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				user := int64((w*7919+i)%users + 1)
				started := begun.Load()
				if _, err := s.Deposit(user, 1); err != nil {
					t.Errorf("deposit: %v", err)
					return
				}
				total.Add(1)
				if !started && !begun.Load() {
					mu.Lock()
					before[user]++
					mu.Unlock()
				}
			}
		})
	}
	for total.Load() < 2000 {
		time.Sleep(time.Millisecond)
	}
	// Writes acknowledged while the flag flips are counted as after: the test may only
	// under-count what the backup must hold.
	mu.Lock()
	begun.Store(true)
	mu.Unlock()
	var buf bytes.Buffer
	info, err := s.Backup(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	for total.Load() < 4000 {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	s.Close()
	if info.Keys == 0 {
		t.Fatal("the backup holds no keys")
	}

	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := Restore(dir, bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	r := quietOpen(t, dir)
	defer r.Close()
	for user := int64(1); user <= users; user++ {
		b, err := r.GetBalance(user)
		if err != nil {
			t.Fatal(err)
		}
		ledger, err := r.Ledger(user, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, e := range ledger {
			sum += e.Amount
		}
		if b.Available != sum || b.Held != 0 {
			t.Fatalf("user %d restored: balance %+v, ledger sums to %d", user, b, sum)
		}
		if b.Available < before[user] {
			t.Fatalf("user %d restored with %d, but %d deposits were acknowledged before the backup began", user, b.Available, before[user])
		}
	}
}

// Restore refuses a directory that holds anything, and a backup cut short or damaged
// leaves nothing behind.
func TestRestoreRefusesWhatItCannotTrust(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	for i := range 20 {
		if _, err := s.Deposit(int64(i+1), 5); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := s.Backup(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	s.Close()
	full := buf.Bytes()

	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "MANIFEST"), []byte("x"), 0o600)
	if _, err := Restore(busy, bytes.NewReader(full)); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a non-empty directory: %v", err)
	}
	flipped := bytes.Clone(full)
	flipped[len(flipped)/2] ^= 1
	for name, b := range map[string][]byte{
		"cut short":    full[:len(full)*2/3],
		"byte flipped": flipped,
		"not a backup": []byte("hello"),
	} {
		dir := filepath.Join(t.TempDir(), "r")
		if _, err := Restore(dir, bytes.NewReader(b)); err == nil {
			t.Fatalf("%s: restored", name)
		}
		if names, _ := os.ReadDir(dir); len(names) != 0 {
			t.Fatalf("%s: %d files left behind", name, len(names))
		}
	}
	// The whole backup restores, into a directory that exists but is empty.
	dir := t.TempDir()
	info, err := Restore(dir, bytes.NewReader(full))
	if err != nil || info.Keys == 0 {
		t.Fatalf("restore: %+v, %v", info, err)
	}
	r, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _ := r.GetBalance(20); b.Available != 5 {
		t.Fatalf("restored balance %+v", b)
	}
}
