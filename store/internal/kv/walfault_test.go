package kv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// faultSwitch fails the log operation it is armed for, once or until disarmed.
type faultSwitch struct {
	op     atomic.Value // string: the operation to fail, "" for none
	err    error
	sticky bool
	hits   atomic.Int64
}

func newFaultSwitch(err error, sticky bool) *faultSwitch {
	f := &faultSwitch{err: err, sticky: sticky}
	f.op.Store("")
	return f
}

func (f *faultSwitch) arm(op string) { f.op.Store(op) }

// fault fails op if it is among the armed operations (a comma-separated list).
func (f *faultSwitch) fault(op, path string) error {
	if !slices.Contains(strings.Split(f.op.Load().(string), ","), op) {
		return nil
	}
	if !f.sticky {
		f.op.Store("")
	}
	f.hits.Add(1)
	return fmt.Errorf("%s %s: %w", op, path, f.err)
}

func openFaulty(t *testing.T, dir string, f *faultSwitch) *DB {
	t.Helper()
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), logFault: f.fault})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

// commitKey writes key = val in a commit that reads key first, as a balance update does.
func readModifyWrite(s *DB, key, val string) (seen string, err error) {
	err = s.Update(func(txn *Txn) error {
		if it, err := txn.Get([]byte(key)); err == nil {
			v, _ := it.ValueCopy(nil)
			seen = string(v)
		}
		return txn.Set([]byte(key), []byte(val))
	})
	return seen, err
}

// A commit whose log write or sync fails is answered with an error and leaves no
// trace: not for readers, not for the next commit, and not after a clean stop and a
// start. Before, its entries stayed in the overlay as the newest version, the applier
// skipped the acknowledged version behind them, and a clean stop deleted the log: the
// key read back empty (10,880 deposits answered 200, balance 0 after a restart).
func TestFailedCommitLeavesNoTrace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		op       string
		prepared bool // in a preallocated segment, whose frames are written at their offset
	}{{"write", "write", false}, {"sync", "sync", false}, {"prepared segment/write", "write", true}, {"prepared segment/sync", "sync", true}} {
		op := tc.op
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := newFaultSwitch(syscall.EIO, false)
			if tc.prepared {
				useSmallSegments(t)
			}
			s := openFaulty(t, dir, f)
			if tc.prepared {
				moveIntoPreparedSegment(t, s)
			}
			if err := setKey(s, "balance", "100"); err != nil {
				t.Fatal(err)
			}
			f.arm(op)
			if _, err := readModifyWrite(s, "balance", "200"); !errors.Is(err, ErrLogUnavailable) {
				t.Fatalf("commit with a failing %s: %v, want ErrLogUnavailable", op, err)
			}
			if got, err := getKey(s, "balance"); err != nil || got != "100" {
				t.Fatalf("reader after the failed commit: %q, %v; want the acknowledged 100", got, err)
			}
			var seen string
			deadline := time.Now().Add(10 * time.Second)
			for {
				var err error
				if seen, err = readModifyWrite(s, "other", "1"); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the log took no write 10 s after one failed %s: %v", op, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if seen, err := readModifyWrite(s, "balance", "150"); err != nil || seen != "100" {
				t.Fatalf("the next commit read %q, %v; want the acknowledged 100", seen, err)
			}
			_ = seen
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = quietOpen(t, dir)
			defer s.Close()
			for key, want := range map[string]string{"balance": "150", "other": "1"} {
				if got, err := getKey(s, key); err != nil || got != want {
					t.Fatalf("after a clean stop and a start, %s = %q, %v; want %q", key, got, err, want)
				}
			}
		})
	}
}

// A commit that read a write that then failed must not be acknowledged either, even if
// it wrote nothing itself: what it answered would be taken back.
func TestCommitThatReadAFailedWriteFails(t *testing.T) {
	f := newFaultSwitch(syscall.EIO, false)
	s := openFaulty(t, t.TempDir(), f)
	defer s.Close()
	held := make(chan struct{})
	release := make(chan struct{})
	hook := func() {
		close(held)
		<-release
	}
	s.wal.beforeSync.Store(&hook)
	doomed := make(chan error, 1)
	go func() { doomed <- setKey(s, "k", "doomed") }()
	<-held
	s.wal.beforeSync.Store(nil)
	reader := make(chan error, 1)
	var seen string
	go func() {
		reader <- s.Update(func(txn *Txn) error {
			it, err := txn.Get([]byte("k"))
			if err == nil {
				v, _ := it.ValueCopy(nil)
				seen = string(v)
			}
			return nil
		})
	}()
	time.Sleep(50 * time.Millisecond) // the reader runs while the write is held
	f.arm("sync")
	close(release)
	if err := <-doomed; !errors.Is(err, ErrLogUnavailable) {
		t.Fatalf("the commit whose sync failed: %v", err)
	}
	if err := <-reader; seen == "doomed" && err == nil {
		t.Fatal("a read-only commit that saw the failed write was acknowledged")
	}
}

// holdRollback makes the log's next failure stop just before it takes the failed
// entries back out of the overlay, until the returned release is called; held is
// closed once it stops there. It widens the moment between a failure and its rollback
// that a commit could otherwise only hit by chance.
func holdRollback(s *DB) (held chan struct{}, release func()) {
	held, gate := make(chan struct{}), make(chan struct{})
	orig := s.wal.rollback
	s.wal.rollback = func(entries []*walEntry) {
		close(held)
		<-gate
		orig(entries)
	}
	return held, sync.OnceFunc(func() { close(gate) })
}

// A commit that starts while a failed write is being taken back, and reads it, is
// refused, whether it writes nothing (it was answered as durable, having read a value
// whose own commit failed; a backup taken then held the write) or writes (it was
// acknowledged once the log had recovered: a deposit built on a balance never
// acknowledged). The log counted the failure before it took the entries back out of
// the overlay, so such a commit carried the new count and passed the check meant to
// refuse it.
func TestCommitStartedDuringARollbackIsRefused(t *testing.T) {
	for _, writes := range []bool{false, true} {
		t.Run(map[bool]string{false: "read-only", true: "read-modify-write"}[writes], func(t *testing.T) {
			f := newFaultSwitch(syscall.EIO, false)
			s := openFaulty(t, t.TempDir(), f)
			defer s.Close()
			if err := setKey(s, "balance", "100"); err != nil {
				t.Fatal(err)
			}
			held, release := holdRollback(s)
			defer release()
			f.arm("sync")
			failed := make(chan error, 1)
			go func() { _, err := readModifyWrite(s, "balance", "200"); failed <- err }()
			<-held
			seen, goOn, answer := make(chan string, 1), make(chan struct{}), make(chan error, 1)
			go func() {
				answer <- s.Update(func(txn *Txn) error {
					it, err := txn.Get([]byte("balance"))
					if err != nil {
						return err
					}
					v, _ := it.ValueCopy(nil)
					seen <- string(v)
					<-goOn
					if writes {
						return txn.Set([]byte("balance"), append(v, "+50"...))
					}
					return nil
				})
			}()
			read := <-seen
			release()
			waitUntil(t, func() bool { return s.Ping(context.Background()) == nil })
			close(goOn)
			err := <-answer
			// Only now: the commit queue may run this commit on the failed one's own
			// goroutine, whose answer then waits for it.
			if ferr := <-failed; !errors.Is(ferr, ErrLogUnavailable) {
				t.Fatalf("the commit whose sync failed: %v", ferr)
			}
			got, gerr := getKey(s, "balance")
			if gerr != nil {
				t.Fatal(gerr)
			}
			if err == nil && read == "200" {
				t.Fatalf("a commit that read the failed write (%q) was acknowledged; balance now %q", read, got)
			}
			if got != "100" {
				t.Fatalf("balance %q after the failed write and the refused commit, want 100", got)
			}
		})
	}
}

// waitUntil polls cond for up to 5 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the log to recover")
		}
	}
}

// ENOSPC from the log is a full disk: writes are refused as ErrInsufficientStorage
// (507 over HTTP), and taken again once the disk has room.
func TestFullDiskRefusesThenResumes(t *testing.T) {
	f := newFaultSwitch(syscall.ENOSPC, true)
	s := openFaulty(t, t.TempDir(), f)
	defer s.Close()
	if err := setKey(s, "a", "1"); err != nil {
		t.Fatal(err)
	}
	f.arm("write")
	for i := range 3 {
		if err := setKey(s, fmt.Sprint("b", i), "2"); !errors.Is(err, ErrInsufficientStorage) {
			t.Fatalf("commit %d on a full disk: %v, want ErrInsufficientStorage", i, err)
		}
	}
	f.arm("write,create") // the recovery's new segment cannot be created either
	time.Sleep(30 * time.Millisecond)
	if st := s.Storage(); !strings.Contains(st.Refusing, "free disk space") {
		t.Fatalf("Storage while full: %+v", st)
	}
	f.arm("")
	deadline := time.Now().Add(10 * time.Second)
	for setKey(s, "c", "3") != nil {
		if time.Now().After(deadline) {
			t.Fatal("writes were not taken again within 10 s of space coming back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, _ := getKey(s, "a"); got != "1" {
		t.Fatalf("a = %q after the full disk, want 1", got)
	}
	if st := s.Storage(); st.Refusing != "" || st.FailedWrites == 0 {
		t.Fatalf("Storage after recovery: %+v", st)
	}
}

// Below the free-space floor every write is refused before it reaches the log, reads
// go on, and writes resume by themselves once space is back.
func TestFreeSpaceFloor(t *testing.T) {
	var free atomic.Int64
	free.Store(1 << 30)
	s, err := Open(Options{Dir: t.TempDir(), SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinFreeBytes: 100 << 20, freeSpace: func() (uint64, error) { return uint64(free.Load()), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := setKey(s, "a", "1"); err != nil {
		t.Fatal(err)
	}
	free.Store(50 << 20)
	deadline := time.Now().Add(5 * time.Second)
	for !errors.Is(setKey(s, "probe", "x"), ErrInsufficientStorage) {
		if time.Now().After(deadline) {
			t.Fatal("writes still taken 5 s after the disk fell below the floor")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := setKey(s, "b", "2"); !errors.Is(err, ErrInsufficientStorage) {
		t.Fatalf("a write below the floor: %v", err)
	}
	if got, err := getKey(s, "a"); err != nil || got != "1" {
		t.Fatalf("a read below the floor: %q, %v", got, err)
	}
	if _, err := getKey(s, "b"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("a refused write is visible: %v", err)
	}
	if st := s.Storage(); st.FreeBytes != 50<<20 || st.MinFreeBytes != 100<<20 || st.Refusing == "" {
		t.Fatalf("Storage below the floor: %+v", st)
	}
	free.Store(200 << 20)
	deadline = time.Now().Add(5 * time.Second)
	for setKey(s, "b", "2") != nil {
		if time.Now().After(deadline) {
			t.Fatal("writes not taken 5 s after space came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A failed fsync leaves the frame's bytes in the file, maybe on disk. They must never
// come back at a replay: the commit was answered with an error. A child process
// commits, has one sync fail, commits more, and is killed; the start after it must
// hold exactly what was acknowledged.
func TestFailedSyncIsNeverReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a real process")
	}
	dir := t.TempDir()
	killReadyChild(t, faultChildEnv+"="+dir)

	s := quietOpen(t, dir)
	defer s.Close()
	for key, want := range map[string]string{"before": "1", "after": "3"} {
		if got, err := getKey(s, key); err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
	if got, err := getKey(s, "doomed"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("the commit whose sync failed came back after the crash: %q, %v", got, err)
	}
}

const faultChildEnv = "HANGAR_STORE_FAULT_CHILD"

func init() {
	if dir := os.Getenv(faultChildEnv); dir != "" {
		faultChild(dir)
		os.Exit(0)
	}
}

// faultChild commits before=1, has doomed=2's sync fail, commits after=3 once the log
// recovered, prints "ready" and waits to be killed without closing anything.
func faultChild(dir string) {
	f := newFaultSwitch(syscall.EIO, false)
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), logFault: f.fault})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	if err := setKey(s, "before", "1"); err != nil {
		fmt.Println("before:", err)
		os.Exit(2)
	}
	f.arm("sync")
	if err := setKey(s, "doomed", "2"); err == nil {
		fmt.Println("doomed was acknowledged")
		os.Exit(2)
	}
	for setKey(s, "after", "3") != nil {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ready")
	select {}
}

// When the applier's last batch fails at a clean stop, the log stays for the next start.
func TestStopWhileBadgerRefusesKeepsTheLog(t *testing.T) {
	dir := t.TempDir()
	var refusing atomic.Bool
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		applyFault: func() error {
			if refusing.Load() {
				return errors.New("no space left on device (injected)")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := setKey(s, fmt.Sprint("stop-", i), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	refusing.Store(true)
	s.Close()
	s = quietOpen(t, dir)
	defer s.Close()
	for i := range 20 {
		if got, err := getKey(s, fmt.Sprint("stop-", i)); err != nil || got != fmt.Sprint(i) {
			t.Fatalf("stop-%d = %q, %v after a stop whose apply failed", i, got, err)
		}
	}
}
