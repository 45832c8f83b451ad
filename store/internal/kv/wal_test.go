package kv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func quietOpen(t *testing.T, dir string) *DB {
	t.Helper()
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

func setKey(s *DB, key, val string) error {
	return s.Update(func(txn *Txn) error { return txn.Set([]byte(key), []byte(val)) })
}

func getKey(s *DB, key string) (string, error) { return readKey(s.View, key) }

// readKey reads key in a view (s.View) or a commit (s.Update).
func readKey(run func(fn func(txn *Txn) error) error, key string) (string, error) {
	var v []byte
	err := run(func(txn *Txn) error {
		it, err := txn.Get([]byte(key))
		if err != nil {
			return err
		}
		v, err = it.ValueCopy(nil)
		return err
	})
	return string(v), err
}

// crashChildEnv makes the test binary a child that commits until it is killed.
const crashChildEnv = "HANGAR_STORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild commits key i = "value-i" (padded to half a kilobyte) from 16 writers and
// prints each acknowledged i. Small segments make the run rotate through many of them,
// plain and preallocated.
func crashChild(dir string) {
	walSegmentLimit, walPrepareAfter = 256<<10, 32<<10
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	out := make(chan int, 1024)
	for w := range 16 {
		go func() {
			for i := w; ; i += 16 {
				if err := setKey(s, fmt.Sprintf("crash:%08d", i), crashValue(i)); err != nil {
					fmt.Println("commit:", err)
					os.Exit(2)
				}
				// A delete in the same history: replay must apply it after the set.
				if i%5 == 0 {
					if err := s.Update(func(txn *Txn) error { return txn.Delete(fmt.Appendf(nil, "crash:%08d", i)) }); err != nil {
						os.Exit(2)
					}
				}
				out <- i
			}
		}()
	}
	w := bufio.NewWriter(os.Stdout)
	for i := range out {
		fmt.Fprintln(w, i)
		if len(out) == 0 {
			w.Flush()
		}
	}
}

func crashValue(i int) string { return fmt.Sprintf("value-%d-%0500d", i, i) }

// A SIGKILLed process loses nothing it acknowledged: commits still in the log, not yet
// in Badger, are replayed at the next start.
func TestCrashReplaysAcknowledgedCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a real process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[int]bool{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && len(acked) < 3000 {
		i, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("child said %q", sc.Text())
		}
		acked[i] = true
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Everything the child printed before the kill was acknowledged too.
	for sc.Scan() {
		if i, err := strconv.Atoi(sc.Text()); err == nil {
			acked[i] = true
		}
	}
	_ = cmd.Wait()
	if len(acked) < 3000 {
		t.Fatalf("child acknowledged only %d commits before exiting", len(acked))
	}
	segs, err := walSegments(filepath.Join(dir, walDirName))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no write-ahead log left by the killed process (segments %v, err %v)", segs, err)
	}

	s := quietOpen(t, dir)
	defer s.Close()
	for i := range acked {
		got, err := getKey(s, fmt.Sprintf("crash:%08d", i))
		switch {
		case i%5 == 0:
			if !errors.Is(err, badger.ErrKeyNotFound) {
				t.Fatalf("key %d: deleted after its set, found %q (err %v)", i, got, err)
			}
		case err != nil || got != crashValue(i):
			t.Fatalf("key %d acknowledged but after restart: %q, %v", i, got, err)
		}
	}
	if segs, _ := walSegments(filepath.Join(dir, walDirName)); len(segs) != 1 {
		t.Fatalf("after replay the log should be one fresh segment, have %v", segs)
	}
	if rotated := segs[len(segs)-1]; rotated < 3 {
		t.Fatalf("the child wrote only %d segments: the test did not exercise rotation", rotated)
	}
}

// closedStore opens a store in a new directory, writes nothing and closes it; it
// returns the directory, its log directory, and the number the next segment must have.
func closedStore(t *testing.T) (dir, walDir string, next uint64) {
	t.Helper()
	dir = t.TempDir()
	s := quietOpen(t, dir)
	s.Close()
	db, err := openBadger(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc, err := newWALScan(db, dirWAL(dir))
	if err != nil {
		t.Fatal(err)
	}
	return dir, dirWAL(dir), sc.applied.seg + 1
}

// buildSegment encodes segment n: its header, then one frame per record (each a set
// of key=value).
func buildSegment(n, prevLen uint64, records [][2]string) []byte {
	buf := encodeSegHeader(n, prevLen)
	for _, r := range records {
		frame := append(make([]byte, frameHeaderLen), appendLogRecord(nil, []*walEntry{{key: r[0], val: []byte(r[1])}})...)
		buf = append(buf, sealFrame(frame)...)
	}
	return buf
}

// writeSegment writes segment n holding records, then tail bytes; it returns the
// length of its frames (what the next segment's header must say).
func writeSegment(t *testing.T, dir string, n, prevLen uint64, records [][2]string, tail []byte) uint64 {
	t.Helper()
	buf := buildSegment(n, prevLen, records)
	framed := uint64(len(buf))
	buf = append(buf, tail...)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(segmentPath(dir, n), buf, 0o600); err != nil {
		t.Fatal(err)
	}
	return framed
}

func TestReplayCutsATornTail(t *testing.T) {
	whole := sealFrame(append(make([]byte, frameHeaderLen), appendLogRecord(nil, []*walEntry{{key: "c", val: []byte("3")}})...))
	tails := map[string][]byte{
		"half a header":         {0x10, 0, 0},
		"header, no payload":    {0x40, 0, 0, 0, 1, 2, 3, 4},
		"bad checksum":          whole[:len(whole)-3],
		"zeroed middle":         append(append(append([]byte{}, whole[:12]...), make([]byte, 8)...), whole[20:]...),
		"zeroes (preallocated)": make([]byte, 64),
	}
	for name, tail := range tails {
		t.Run(name, func(t *testing.T) {
			dir, walDir, next := closedStore(t)
			writeSegment(t, walDir, next, 0, [][2]string{{"a", "1"}, {"b", "2"}}, tail)

			s := quietOpen(t, dir)
			defer s.Close()
			for key, want := range map[string]string{"a": "1", "b": "2"} {
				if got, err := getKey(s, key); err != nil || got != want {
					t.Fatalf("%s = %q, %v; want %q", key, got, err, want)
				}
			}
			if _, err := getKey(s, "c"); !errors.Is(err, badger.ErrKeyNotFound) {
				t.Fatalf("the torn record was applied: %v", err)
			}
			// The next segment continues the numbering.
			if segs, _ := walSegments(walDir); len(segs) != 1 || segs[0] != next+1 {
				t.Fatalf("segments after replay %v, want [%d]", segs, next+1)
			}
		})
	}
}

func TestReplayRefusesAHoleInHistory(t *testing.T) {
	dir, walDir, next := closedStore(t)
	n := writeSegment(t, walDir, next, 0, [][2]string{{"a", "1"}}, []byte("garbage!garbage!"))
	writeSegment(t, walDir, next+1, n+16, [][2]string{{"b", "2"}}, nil)
	_, err := Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var damage *LogDamageError
	if !errors.As(err, &damage) || damage.Segment != next || damage.Offset != int64(n) {
		t.Fatalf("Open with a corrupt middle segment: %v, want damage in segment %d at byte %d", err, next, n)
	}
}

// Reads inside and outside commits see the overlay (committed, maybe not in Badger yet)
// merged with Badger, newest winning, deletes hiding older values.
func TestOverlayMergesWithBadger(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	for i := range 6 {
		if err := setKey(s, fmt.Sprintf("m:%d", i), "old"); err != nil {
			t.Fatal(err)
		}
	}
	s.Close() // everything is in Badger now
	s = quietOpen(t, dir)
	defer s.Close()
	// Still in the overlay: m:1 rewritten, m:2 deleted, m:6 new.
	err := s.Update(func(txn *Txn) error {
		return errors.Join(txn.Set([]byte("m:1"), []byte("new")), txn.Delete([]byte("m:2")), txn.Set([]byte("m:6"), []byte("new")))
	})
	if err != nil {
		t.Fatal(err)
	}
	scan := func(txn *Txn, reverse bool, seek string) string {
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.Reverse = []byte("m:"), reverse
		it := txn.NewIterator(opts)
		defer it.Close()
		var b strings.Builder
		if seek == "" {
			it.Rewind()
		} else {
			it.Seek([]byte(seek))
		}
		for ; it.ValidForPrefix([]byte("m:")); it.Next() {
			v, _ := it.Item().ValueCopy(nil)
			fmt.Fprintf(&b, "%s=%s ", it.Item().Key()[2:], v)
		}
		return strings.TrimSpace(b.String())
	}
	cases := []struct {
		name    string
		reverse bool
		seek    string
		want    string
	}{
		{"forward", false, "", "0=old 1=new 3=old 4=old 5=old 6=new"},
		{"reverse", true, "m:\xff", "6=new 5=old 4=old 3=old 1=new 0=old"},
		{"seek forward", false, "m:2", "3=old 4=old 5=old 6=new"},
		{"seek reverse", true, "m:2", "1=new 0=old"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got string
			_ = s.View(func(txn *Txn) error { got = scan(txn, c.reverse, c.seek); return nil })
			if got != c.want {
				t.Fatalf("view: %q, want %q", got, c.want)
			}
			// A commit sees its own writes merged in as well.
			err := s.Update(func(txn *Txn) error {
				if err := txn.Set([]byte("m:7"), []byte("mine")); err != nil {
					return err
				}
				got = scan(txn, c.reverse, c.seek)
				return errors.New("roll back")
			})
			if err == nil {
				t.Fatal("the failing commit succeeded")
			}
			want := c.want + " 7=mine"
			if c.reverse {
				want = "7=mine " + c.want
				if c.seek == "m:2" {
					want = c.want
				}
			}
			if got != want {
				t.Fatalf("inside a commit: %q, want %q", got, want)
			}
		})
	}
	if _, err := getKey(s, "m:7"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("a failed commit's write is visible: %v", err)
	}
}

// Sequences continue where a clean Close left them, and skip at most one lease after
// a crash (here: a store closed without writing its leases back).
func TestSequencesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	var last uint64
	for range 1500 {
		n, err := s.NextSeq("seq:test")
		if err != nil || n <= last {
			t.Fatalf("nextSeq = %d, %v after %d", n, err, last)
		}
		last = n
	}
	s.Close()
	s = quietOpen(t, dir)
	n, err := s.NextSeq("seq:test")
	if err != nil || n != last+1 {
		t.Fatalf("after a clean restart nextSeq = %d, %v; want %d", n, err, last+1)
	}
	// Without releasing the lease (as a crash would).
	close(s.stopGC)
	<-s.gcDone
	s.shutdown()
	s = quietOpen(t, dir)
	defer s.Close()
	m, err := s.NextSeq("seq:test")
	if err != nil || m <= n || m > n+seqLeaseSize {
		t.Fatalf("after an unreleased lease nextSeq = %d, %v; want in (%d, %d]", m, err, n, n+seqLeaseSize)
	}
}

// The cache keeps within its budget however many keys pass through.
func TestCacheStaysWithinBudget(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), CacheBytes: 64 << 10, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := bytes.Repeat([]byte("x"), 100)
	for i := range 5000 {
		if err := setKey(s, fmt.Sprintf("c:%d", i), string(val)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.ovMu.RLock()
		n := len(s.overlay)
		s.ovMu.RUnlock()
		if n*(100+entryOverhead) <= 2*(64<<10) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("overlay holds %d entries, budget is 64 KiB", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, i := range []int{0, 2500, 4999} {
		if got, err := getKey(s, fmt.Sprintf("c:%d", i)); err != nil || got != string(val) {
			t.Fatalf("c:%d after eviction: %v", i, err)
		}
	}
}

// A crash can leave a preallocated segment that was never written after the one being
// written, which may end torn: the torn one still counts as the last.
func TestReplayIgnoresAnUnusedPreallocatedSegment(t *testing.T) {
	dir, walDir, next := closedStore(t)
	// A rotated segment whose zero tail was not cut yet reads up to what the next says.
	n := writeSegment(t, walDir, next, 0, [][2]string{{"b", "2"}}, make([]byte, 4096))
	writeSegment(t, walDir, next+1, n, [][2]string{{"a", "1"}}, append(make([]byte, 0), 0x30, 0, 0, 0, 9))
	if err := os.WriteFile(segmentPath(walDir, next+2), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	s := quietOpen(t, dir)
	defer s.Close()
	for key, want := range map[string]string{"a": "1", "b": "2"} {
		if got, err := getKey(s, key); err != nil || got != want {
			t.Fatalf("%s = %q, %v; want %q", key, got, err, want)
		}
	}
}

// Readers outside commits never see a commit before the log's sync covers it (a crash
// could take it back); commits see it at once, being ordered after it in the log.
func TestCommitVisibleToReadersOnlyOnceDurable(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if err := setKey(s, "v:k", "old"); err != nil {
		t.Fatal(err)
	}
	// The first sync after the hook is set is the test's commit's: it is held whether
	// or not the test already waits on held (a select with a default would let it pass
	// when the writer gets there first, and the test would wait forever).
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce sync.Once
	hook := func() { holdOnce.Do(func() { close(held); <-release }) }
	s.wal.beforeSync.Store(&hook)
	done := make(chan error, 1)
	go func() {
		done <- s.Update(func(txn *Txn) error {
			return errors.Join(txn.Set([]byte("v:k"), []byte("new")), txn.Set([]byte("v:fresh"), []byte("1")))
		})
	}()
	<-held // written, not synced

	if got, err := getKey(s, "v:k"); err != nil || got != "old" {
		t.Errorf("a view saw %q (%v) before the sync; want old", got, err)
	}
	if _, err := getKey(s, "v:fresh"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Errorf("a view saw a key created by an unsynced commit: %v", err)
	}
	var keys []string
	_ = s.View(func(txn *Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("v:")})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix([]byte("v:")); it.Next() {
			v, _ := it.Item().ValueCopy(nil)
			keys = append(keys, string(it.Item().Key())+"="+string(v))
		}
		return nil
	})
	if strings.Join(keys, " ") != "v:k=old" {
		t.Errorf("a scan saw %v before the sync; want [v:k=old]", keys)
	}
	// A commit reads the newest, synced or not.
	seen := make(chan string, 1)
	go s.Update(func(txn *Txn) error {
		it, err := txn.Get([]byte("v:k"))
		if err != nil {
			return err
		}
		v, _ := it.ValueCopy(nil)
		seen <- string(v)
		return nil
	})
	if got := <-seen; got != "new" {
		t.Errorf("a commit read %q; want new", got)
	}

	s.wal.beforeSync.Store(nil)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, err := getKey(s, "v:k"); err != nil || got != "new" {
		t.Fatalf("after the sync a view reads %q, %v; want new", got, err)
	}
}

// A commit a client waits on (updateNow) runs before background commits queued earlier.
func TestAcknowledgementCommitsGoFirst(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	block, started := make(chan struct{}), make(chan struct{})
	var unblock sync.Once
	release := func() { unblock.Do(func() { close(block) }) }
	defer release()                                                       // before Close, even when the test fails
	go s.Update(func(*Txn) error { close(started); <-block; return nil }) // holds the commit queue
	<-started
	var order []string
	var mu sync.Mutex
	record := func(name string) func(*Txn) error {
		return func(*Txn) error { mu.Lock(); order = append(order, name); mu.Unlock(); return nil }
	}
	queued := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); queuedCommits(s) < n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("only %d commits queued, want %d", queuedCommits(s), n)
			}
		}
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() { _ = s.Update(record(fmt.Sprint("background", i))) })
	}
	queued(5)
	wg.Go(func() { _ = s.UpdateNow(record("acknowledgement")) })
	queued(6)
	release()
	wg.Wait()
	if len(order) != 6 || order[0] != "acknowledgement" {
		t.Fatalf("commit order %v: the acknowledgement should run first", order)
	}
}

// After the log fails to write, the commit is refused and Ping reports it (so does
// /health) until the log has started a fresh segment, rather than acknowledging what is
// not on disk; then it takes writes again by itself.
func TestFailedLogRefusesWritesAndFailsPing(t *testing.T) {
	var broken atomic.Bool
	s, err := Open(Options{Dir: t.TempDir(), SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		logFault: func(op, path string) error {
			if broken.Load() {
				return fmt.Errorf("%s %s: input/output error (injected)", op, path)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("healthy store: Ping = %v", err)
	}
	broken.Store(true)
	if err := setKey(s, "f:1", "x"); !errors.Is(err, ErrLogUnavailable) {
		t.Fatalf("a commit the log could not write: %v, want ErrLogUnavailable", err)
	}
	if err := setKey(s, "f:2", "x"); !errors.Is(err, ErrLogUnavailable) {
		t.Fatalf("a later commit while the disk still fails: %v, want ErrLogUnavailable", err)
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Fatal("Ping is healthy with a failed log")
	}
	if _, err := getKey(s, "f:1"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("the refused commit is visible to readers: %v", err)
	}
	broken.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for setKey(s, "f:3", "x") != nil {
		if time.Now().After(deadline) {
			t.Fatal("the log did not take writes again within 10 s of the disk working")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping after recovery: %v", err)
	}
}

// When Badger refuses the applier's writes (a full disk, say), nothing acknowledged may
// be lost: the entries stay readable from memory, the log stays on disk when the store
// closes, a start while Badger still refuses fails rather than come up without them,
// and the next start that can write replays them.
func TestApplierGivingUpKeepsTheLog(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var refused atomic.Int64
	full := func() error {
		refused.Add(1)
		return errors.New("no space left on device (injected)")
	}
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: quiet, applyFault: full})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		if err := setKey(s, fmt.Sprintf("full-%02d", i), fmt.Sprint(i)); err != nil {
			t.Fatalf("commit %d while Badger refuses: %v", i, err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); refused.Load() < applyMaxAttempts; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the applier tried %d times in 20s, want %d attempts", refused.Load(), applyMaxAttempts)
		}
	}
	for i := range n {
		if v, err := getKey(s, fmt.Sprintf("full-%02d", i)); err != nil || v != fmt.Sprint(i) {
			t.Fatalf("after the applier gave up, key %d = %q, %v; want it readable from memory", i, v, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	segs, err := walSegments(filepath.Join(dir, walDirName))
	if err != nil || len(segs) == 0 {
		t.Fatalf("log segments after close = %v, %v; want the unapplied log kept", segs, err)
	}

	if s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: quiet, applyFault: full}); err == nil {
		s.Close()
		t.Fatal("Open succeeded while Badger refuses the replay; want an error")
	}

	s = quietOpen(t, dir)
	defer s.Close()
	for i := range n {
		if v, err := getKey(s, fmt.Sprintf("full-%02d", i)); err != nil || v != fmt.Sprint(i) {
			t.Fatalf("after replay, key %d = %q, %v; want %q", i, v, err, fmt.Sprint(i))
		}
	}
}

// Badger's own log is not synced write by write, so an applied segment may go only once
// Badger's copy of it is durable: while that sync fails, the segments stay (a power cut
// could take Badger's copy back), and the next start replays them; once it works, the
// applier removes the segments it closes.
func TestAppliedSegmentsStayUntilBadgerIsSynced(t *testing.T) {
	limit, after := walSegmentLimit, walPrepareAfter
	walSegmentLimit, walPrepareAfter = 16<<10, 1<<30
	defer func() { walSegmentLimit, walPrepareAfter = limit, after }()
	dir := t.TempDir()
	logDir := filepath.Join(dir, walDirName)
	var failing atomic.Bool
	var syncs atomic.Int64
	fault := func() error {
		syncs.Add(1)
		if failing.Load() {
			return errors.New("sync failed (injected)")
		}
		return nil
	}
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), badgerSyncFault: fault})
	if err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) { t.Helper(); writeSegKeys(t, s, from, to) }
	waitSyncs := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); syncs.Load() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the applier synced Badger %d times in 20s, want %d", syncs.Load(), n)
			}
		}
	}
	segments := func() int {
		t.Helper()
		segs, err := walSegments(logDir)
		if err != nil {
			t.Fatal(err)
		}
		return len(segs)
	}

	failing.Store(true)
	write(0, 200) // about six segments of 16 KiB
	waitSyncs(1)
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n < 4 {
		t.Fatalf("%d log segments left while Badger's sync fails, want the applied ones kept", n)
	}

	failing.Store(false)
	kept := segments()
	from := syncs.Load()
	write(200, 400)
	waitSyncs(from + 1)
	for deadline := time.Now().Add(20 * time.Second); segments() >= kept+5; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d log segments after Badger's sync worked again, want those it covered removed", segments())
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	for i := range 400 {
		if v, err := getKey(s, fmt.Sprintf("seg-%04d", i)); err != nil || v != segValue {
			t.Fatalf("after a restart, key %d = %d bytes, %v", i, len(v), err)
		}
	}
	if n := segments(); n > 2 {
		t.Fatalf("%d log segments after the replay, want the replayed ones removed", n)
	}
}

// A prepared segment is all zeroes, of the segment size rounded up to the direct-I/O
// block when written directly; the buffered way (a wrapped file, as the fault tests
// use, or a filesystem refusing O_DIRECT) writes the size exactly; a failing disk fails
// it.
func TestPreparedSegmentIsZeroFilled(t *testing.T) {
	noFault := func(string, string) error { return nil }
	dirs := map[string]string{"temp dir": t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "hangar-wal-"); err == nil {
			defer os.RemoveAll(d)
			dirs["tmpfs"] = d
		}
	}
	for name, dir := range dirs {
		for _, buffered := range []bool{false, true} {
			for _, size := range []int64{256 << 10, 3<<20 + 100} {
				t.Run(fmt.Sprintf("%s/buffered=%v/%d", name, buffered, size), func(t *testing.T) {
					w := &wal{dir: dir, sync: true}
					if buffered {
						w.fault = noFault
					}
					path := filepath.Join(dir, fmt.Sprintf("seg-%v-%d", buffered, size))
					// Something written before must not survive as anything but zeroes.
					if err := os.WriteFile(path, []byte("stale bytes"), 0o600); err != nil {
						t.Fatal(err)
					}
					f, err := w.create(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					if err := w.zeroFill(f, path, size); err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					most := (size + directAlign - 1) &^ (directAlign - 1)
					if buffered {
						most = size
					}
					if int64(len(b)) < size || int64(len(b)) > most || !allZero(b) {
						t.Fatalf("prepared segment: %d bytes (want %d to %d), all zero %v", len(b), size, most, allZero(b))
					}
				})
			}
		}
	}
	t.Run("failing disk", func(t *testing.T) {
		dir := t.TempDir()
		w := &wal{dir: dir, sync: true, fault: func(op, _ string) error {
			if op == "sync" {
				return syscall.EIO
			}
			return nil
		}}
		path := filepath.Join(dir, "seg")
		f, err := w.create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := w.zeroFill(f, path, 64<<10); !errors.Is(err, syscall.EIO) {
			t.Fatalf("zero fill on a failing disk: %v, want EIO", err)
		}
	})
}

// Frames written into a preallocated segment, whose zeroes went to the disk around the
// page cache, make the kernel read nothing: a write that covered part of an uncached
// page had it read from the disk first, inside the log writer's write.
func TestFramesInAPreparedSegmentReadNothingFromTheDisk(t *testing.T) {
	if _, err := procReadBytes(); err != nil {
		t.Skipf("no per-process I/O counters: %v", err)
	}
	useSmallSegments(t)
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	moveIntoPreparedSegment(t, s)
	value := strings.Repeat("v", 700) // frames that end mid-page
	before, _ := procReadBytes()
	for i := range 500 { // about 90 pages
		if err := setKey(s, fmt.Sprint("k:", i), value); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := procReadBytes(); got != before {
		t.Fatalf("500 commits into a prepared segment read %d bytes from the disk, want none", got-before)
	}
}

// useSmallSegments has the log prepare a 4 MiB segment once 64 KiB were written, for
// the rest of the test.
func useSmallSegments(t *testing.T) {
	limit, after := walSegmentLimit, walPrepareAfter
	walSegmentLimit, walPrepareAfter = 4<<20, 64<<10
	t.Cleanup(func() { walSegmentLimit, walPrepareAfter = limit, after })
}

// moveIntoPreparedSegment commits until the log writes into a preallocated segment.
func moveIntoPreparedSegment(t *testing.T, s *DB) {
	t.Helper()
	var inPrepared atomic.Bool
	hook := func() { inPrepared.Store(s.wal.prealloc) } // runs on the writer's goroutine
	s.wal.beforeSync.Store(&hook)
	defer s.wal.beforeSync.Store(nil)
	value := strings.Repeat("v", 700)
	for i := 0; !inPrepared.Load(); i++ {
		if i == 100_000 {
			t.Fatal("the log never moved into a prepared segment")
		}
		if err := setKey(s, fmt.Sprint("fill:", i), value); err != nil {
			t.Fatal(err)
		}
	}
}

// procReadBytes is the bytes this process has had read from a block device.
func procReadBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("no read_bytes in /proc/self/io")
}

// segValue is what writeSegKeys writes to every key.
var segValue = strings.Repeat("v", 500)

// writeSegKeys commits keys seg-<from>…seg-<to-1>, 500 bytes each: with a 16 KiB
// segment limit, a new segment every 30 or so.
func writeSegKeys(t *testing.T, s *DB, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := setKey(s, fmt.Sprintf("seg-%04d", i), segValue); err != nil {
			t.Fatal(err)
		}
	}
}
