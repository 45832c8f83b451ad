package kv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

const logChildEnv = "HANGAR_STORE_LOG_CHILD"

func init() {
	if v := os.Getenv(logChildEnv); v != "" {
		dir, mode, _ := strings.Cut(v, ",")
		logChild(dir, mode)
		os.Exit(0)
	}
}

const logChildKeys = 400

// logChild writes logChildKeys keys from four writers into small segments, then prints
// "ready" and waits to be killed. Mode "refuse" has Badger refuse every apply, so every
// segment stays on disk; mode "apply" lets the applier catch up first, so that Badger
// records how far it holds the log.
func logChild(dir, mode string) {
	if mode == "failedsync" {
		failedSyncChild(dir)
		return
	}
	walSegmentLimit, walPrepareAfter = 16<<10, 1<<30
	opts := Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mode == "refuse" {
		opts.applyFault = func() error { return errors.New("refused (injected)") }
	}
	s, err := Open(opts)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < logChildKeys; i += 4 {
				if err := setKey(s, logChildKey(i), logChildValue(i)); err != nil {
					fmt.Println("commit:", err)
					os.Exit(2)
				}
			}
		})
	}
	wg.Wait()
	if mode == "apply" {
		time.Sleep(2500 * time.Millisecond)
	}
	fmt.Println("ready")
	select {}
}

func logChildKey(i int) string   { return fmt.Sprintf("k:%04d", i) }
func logChildValue(i int) string { return fmt.Sprintf("%d-%0200d", i, i) }

// crashedLog runs logChild in mode and kills it, returning the data directory.
func crashedLog(t *testing.T, mode string) string {
	t.Helper()
	dir := t.TempDir()
	killReadyChild(t, logChildEnv+"="+dir+","+mode)
	return dir
}

// killReadyChild runs this test binary as a child with env set, waits for it to print
// "ready", and SIGKILLs it.
func killReadyChild(t *testing.T, env string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("child said %q, %v", line, err)
	}
}

// copyDir copies a crashed data directory so each case damages its own.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// allKeysThere reports how many of the child's keys a store holds.
func allKeysThere(t *testing.T, s *DB) int {
	t.Helper()
	n := 0
	for i := range logChildKeys {
		if v, err := getKey(s, logChildKey(i)); err == nil && v == logChildValue(i) {
			n++
		} else if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			t.Fatal(err)
		}
	}
	return n
}

func segmentsOf(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := walSegments(dirWAL(dir))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range segs {
		paths = append(paths, segmentPath(dirWAL(dir), n))
	}
	return paths
}

// Damage anywhere in the log either leaves every acknowledged write there, or stops
// the start with an error naming the file; never a clean start with a hole. Repair
// then cuts the log at the damage, keeps a copy, and says what was lost.
func TestDamagedLogStopsTheStart(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes")
	}
	refused := crashedLog(t, "refuse") // every segment still on disk, Badger empty
	applied := crashedLog(t, "apply")  // Badger holds the log up to near its end
	if n := len(segmentsOf(t, refused)); n < 4 {
		t.Fatalf("the child left %d segments, want several", n)
	}
	flip := func(path string, at float64) {
		b, _ := os.ReadFile(path)
		i := segHeaderLen + int(float64(len(b)-segHeaderLen)*at)
		b[i] ^= 0x5a
		os.WriteFile(path, b, 0o600)
	}
	zeroHeader := func(path string) {
		b, _ := os.ReadFile(path)
		copy(b, make([]byte, segHeaderLen))
		os.WriteFile(path, b, 0o600)
	}
	truncate := func(path string, at float64) {
		b, _ := os.ReadFile(path)
		os.Truncate(path, int64(segHeaderLen+int(float64(len(b)-segHeaderLen)*at)))
	}
	// cutAtFrame cuts a segment right after one of its whole frames, which its own
	// contents cannot tell from an end.
	cutAtFrame := func(path string) {
		b, _ := os.ReadFile(path)
		off := segHeaderLen
		_, next, err := readFrame(b, off)
		if err != nil {
			t.Fatal(err)
		}
		os.Truncate(path, int64(next))
	}
	middle := func(segs []string) string { return segs[len(segs)/2] }
	last := func(segs []string) string { return segs[len(segs)-1] }
	cases := []struct {
		name   string
		source string
		damage func(segs []string)
	}{
		{"byte flipped a third into the last segment", refused, func(s []string) { flip(last(s), 1.0/3) }},
		{"last segment's header zeroed", refused, func(s []string) { zeroHeader(last(s)) }},
		{"last segment truncated below what Badger holds", applied, func(s []string) { truncate(last(s), 1.0/3) }},
		{"byte flipped in a middle segment", refused, func(s []string) { flip(middle(s), 0.5) }},
		{"middle segment's header zeroed", refused, func(s []string) { zeroHeader(middle(s)) }},
		{"middle segment cut at a frame boundary", refused, func(s []string) { cutAtFrame(middle(s)) }},
		{"middle segment deleted", refused, func(s []string) { os.Remove(middle(s)) }},
		{"oldest segment deleted", applied, func(s []string) { os.Remove(s[0]) }},
		{"oldest segment deleted before Badger held any of it", refused, func(s []string) { os.Remove(s[0]) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, tc.source)
			segs := segmentsOf(t, dir)
			tc.damage(segs)
			s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err == nil {
				n := allKeysThere(t, s)
				s.Close()
				if n != logChildKeys {
					t.Fatalf("started cleanly with %d of %d acknowledged keys", n, logChildKeys)
				}
				return // the damage hit only what Badger already held: nothing lost
			}
			var damage *LogDamageError
			if !errors.As(err, &damage) {
				t.Fatalf("start refused with %v, want a LogDamageError", err)
			}
			if !strings.Contains(err.Error(), filepath.Base(damage.Path)) || !strings.Contains(err.Error(), "hangar repair") {
				t.Fatalf("the error does not name the file and the way out: %v", err)
			}
			var out bytes.Buffer
			rep, err := Repair(dir, &out)
			if err != nil {
				t.Fatalf("repair: %v", err)
			}
			if rep.Damage == nil || rep.KeptAt == "" {
				t.Fatalf("repair found nothing: %+v\n%s", rep, out.String())
			}
			if kept, _ := os.ReadDir(rep.KeptAt); len(kept) == 0 {
				t.Fatalf("repair kept no copy in %s", rep.KeptAt)
			}
			s, err = Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatalf("start after repair: %v\nrepair said:\n%s", err, out.String())
			}
			n := allKeysThere(t, s)
			s.Close()
			if lost := logChildKeys - n; lost > 0 && !strings.Contains(out.String(), "LOST") {
				t.Fatalf("%d keys missing after repair, which said:\n%s", lost, out.String())
			}
			t.Logf("repair: %s", strings.ReplaceAll(strings.TrimSpace(out.String()), "\n", " | "))
		})
	}
}

// An undamaged crashed log replays whole, and Repair finds nothing to do.
func TestCrashedLogReplaysWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes")
	}
	for _, mode := range []string{"refuse", "apply"} {
		dir := crashedLog(t, mode)
		var out bytes.Buffer
		if rep, err := Repair(dir, &out); err != nil || rep.Damage != nil {
			t.Fatalf("%s: repair of a sound log: %+v, %v\n%s", mode, rep, err, out.String())
		}
		s := quietOpen(t, dir)
		if n := allKeysThere(t, s); n != logChildKeys {
			t.Fatalf("%s: %d of %d keys after replay", mode, n, logChildKeys)
		}
		s.Close()
	}
}

// FuzzReadFrame feeds arbitrary bytes to the log's decoders: they must never panic,
// and a frame they accept must re-encode to the same bytes.
func FuzzReadFrame(f *testing.F) {
	f.Add(buildSegment(1, 0, [][2]string{{"a", "1"}, {"b", "22"}}))
	f.Add(buildSegment(2, 64, nil))
	f.Add([]byte("HGRWAL02"))
	f.Add(make([]byte, 48))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := decodeSegHeader(b); err != nil {
			return
		}
		for off := segHeaderLen; ; {
			payload, next, err := readFrame(b, off)
			if err != nil {
				return
			}
			var entries [][]*walEntry
			if _, err := frameRecords(payload, func(e []*walEntry) error { entries = append(entries, e); return nil }); err != nil {
				return
			}
			var again []byte
			for _, e := range entries {
				again = appendLogRecord(again, e)
			}
			if !bytes.Equal(again, payload) {
				t.Fatalf("frame at %d does not re-encode to itself", off)
			}
			off = next
		}
	})
}

// failedSyncChild commits "before", then "doomed" with every fdatasync and every
// segment creation failing, so that the log cannot move to a new segment; it prints
// "ready" once "doomed" was answered with an error, and waits to be killed.
func failedSyncChild(dir string) {
	f := newFaultSwitch(syscall.EIO, true)
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), logFault: f.fault})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	if err := setKey(s, "before", "1"); err != nil {
		fmt.Println("commit:", err)
		os.Exit(2)
	}
	f.arm("sync,create")
	if err := setKey(s, "doomed", "2"); err == nil {
		fmt.Println("the doomed commit was acknowledged")
		os.Exit(2)
	}
	time.Sleep(100 * time.Millisecond) // the log tries to recover, and cannot
	fmt.Println("ready")
	select {}
}

// A commit answered with an error does not come back after a crash, even when the log
// could not move to a new segment before it (whose header alone hid the failed frame):
// the failed frame is cut from its segment first. It came back as the log's valid end.
func TestFailedCommitStaysFailedAcrossACrash(t *testing.T) {
	dir := crashedLog(t, "failedsync")
	s := quietOpen(t, dir)
	defer s.Close()
	if got, err := getKey(s, "doomed"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("a commit answered with an error came back after the crash: %q, %v", got, err)
	}
	if got, err := getKey(s, "before"); err != nil || got != "1" {
		t.Fatalf("the acknowledged commit before it: %q, %v", got, err)
	}
}

// A last segment emptied after Badger took frames from it (truncated to nothing, or
// zeroed) is damage, not a preallocated segment never written: the start took it for
// one and went on without the commits Badger did not have yet.
func TestEmptiedLastSegmentIsDamage(t *testing.T) {
	for _, emptied := range []string{"truncated", "zeroed"} {
		t.Run(emptied, func(t *testing.T) {
			dir, walDir, next := closedStore(t)
			one := buildSegment(next, 0, [][2]string{{"a", "1"}})
			writeSegment(t, walDir, next, 0, [][2]string{{"a", "1"}, {"b", "2"}}, nil)
			db, err := openBadger(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			if err := writeMeta(db, db.MaxVersion()+1, map[string][]byte{"a": []byte("1"),
				metaWALApplied: logPos{next, uint64(len(one))}.encode()}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			path := segmentPath(walDir, next)
			size := int64(0)
			if emptied == "zeroed" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				size = fi.Size()
			}
			if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			var damage *LogDamageError
			if !errors.As(err, &damage) {
				if err == nil {
					s.Close()
				}
				t.Fatalf("a %s last segment Badger held part of: %v, want the start refused as damage", emptied, err)
			}
		})
	}
}

// middleSegmentRemoved writes three segments after a closed store's log, the middle
// one holding two commits Badger does not have, and removes that middle one.
func middleSegmentRemoved(t *testing.T) (dir string, next uint64) {
	t.Helper()
	dir, walDir, next := closedStore(t)
	n0 := writeSegment(t, walDir, next, 0, [][2]string{{"a", "1"}}, nil)
	n1 := writeSegment(t, walDir, next+1, n0, [][2]string{{"b", "2"}, {"c", "3"}}, nil)
	writeSegment(t, walDir, next+2, n1, nil, nil)
	if err := os.Remove(segmentPath(walDir, next+1)); err != nil {
		t.Fatal(err)
	}
	return dir, next
}

// A segment missing between two is named as missing, not as the one before it cut
// short (the next one's header was read against it first).
func TestMissingMiddleSegmentIsNamed(t *testing.T) {
	dir, next := middleSegmentRemoved(t)
	_, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var damage *LogDamageError
	if !errors.As(err, &damage) || damage.Segment != next+1 || !strings.Contains(damage.Reason, "missing") {
		t.Fatalf("segment %d removed: %v, want it named as missing", next+1, err)
	}
}

// Repair says commits were lost when the damage is a missing segment Badger did not
// hold: it said nothing acknowledged was lost, having counted only the frames it could
// read.
func TestRepairOfAMissingSegmentReportsLoss(t *testing.T) {
	dir, _ := middleSegmentRemoved(t)
	var out strings.Builder
	rep, err := Repair(dir, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Missing || !strings.Contains(out.String(), "LOST") || strings.Contains(out.String(), "Nothing acknowledged was lost") {
		t.Fatalf("repair of a missing segment: %+v\n%s", rep, out.String())
	}
}

// A repair whose copy of a segment fails part-way changes nothing: every copy is made
// before the first segment is cut, so the log still reads as before, and the repair
// can be run again. It used to cut each segment right after copying it.
func TestRepairFailingToCopyLeavesTheLogAsItWas(t *testing.T) {
	dir, walDir, next := closedStore(t)
	n0 := writeSegment(t, walDir, next, 0, [][2]string{{"a", "1"}, {"b", "2"}}, nil)
	n1 := writeSegment(t, walDir, next+1, n0, [][2]string{{"c", "3"}}, nil)
	writeSegment(t, walDir, next+2, n1, [][2]string{{"d", "4"}}, nil)
	first := segmentPath(walDir, next)
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-3] ^= 0x5a // the first segment's last frame no longer checks
	if err := os.WriteFile(first, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, p := range segmentsOf(t, dir) {
		before[p], _ = os.ReadFile(p)
	}

	copies := 0
	realCopy := keepCopy
	keepCopy = func(path string, b []byte) error {
		if copies++; copies == 2 {
			return errors.New("injected: no space left on device")
		}
		return realCopy(path, b)
	}
	_, err = Repair(dir, io.Discard)
	keepCopy = realCopy
	if err == nil || !strings.Contains(err.Error(), "unchanged") {
		t.Fatalf("repair with a failing copy: %v, want an error saying the log is unchanged", err)
	}
	after := segmentsOf(t, dir)
	if len(after) != len(before) {
		t.Fatalf("%d segments after the failed repair, want %d", len(after), len(before))
	}
	for _, p := range after {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, before[p]) {
			t.Fatalf("%s changed by a repair that failed", filepath.Base(p))
		}
	}

	var out strings.Builder
	rep, err := Repair(dir, &out)
	if err != nil || rep.Damage == nil || rep.Segments != 2 {
		t.Fatalf("second repair: %+v, %v\n%s", rep, err, out.String())
	}
	s := quietOpen(t, dir)
	defer s.Close()
	if v, err := getKey(s, "a"); err != nil || v != "1" {
		t.Fatalf("a before the damage: %q, %v", v, err)
	}
	for _, k := range []string{"b", "c", "d"} {
		if _, err := getKey(s, k); !errors.Is(err, badger.ErrKeyNotFound) {
			t.Fatalf("%s, at or after the damage, is still there: %v", k, err)
		}
	}
}
