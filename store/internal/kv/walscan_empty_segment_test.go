package kv

import (
	"errors"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"
)

// The start-time check added for a deleted oldest segment reads the oldest segment's
// prevLen and refuses the start unless Badger's applied position reaches it. But a
// segment whose very first write failed (ENOSPC, EIO) holds only its header: recover()
// starts the next segment with prevLen = 32, and the applier, given the closed
// segment and no entries, removes it without moving Badger's applied position (apply
// returns early on an empty batch). Nothing is missing — the removed segment held no
// commit — yet a crash from then until the next commit is applied (an idle daemon: any
// time later) leaves a store whose start is refused as damaged ("the segment is
// missing: it held 32 bytes"), sending the operator to `hangar repair` for nothing.
func TestFailedFirstWriteThenCrashIsNotDamage(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if err := setKey(s, "a", "1"); err != nil {
		t.Fatal(err)
	}
	s.Close()

	f := newFaultSwitch(syscall.ENOSPC, false)
	s = openFaulty(t, dir, f)
	first, err := walSegments(dirWAL(dir))
	if err != nil || len(first) != 1 {
		t.Fatalf("segments at start: %v %v", first, err)
	}
	f.arm("write") // the fresh segment's first write fails once
	if err := setKey(s, "b", "2"); err == nil {
		t.Fatal("the armed write did not fail")
	}
	// The log recovers into the next segment; the applier removes the empty one.
	deadline := time.Now().Add(10 * time.Second)
	for {
		segs, _ := walSegments(dirWAL(dir))
		if len(segs) == 1 && segs[0] > first[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("segments %v: the log did not move on from %v", segs, first)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A crash now: the data directory as it is on disk.
	crashed := copyDir(t, dir)
	s.Close()

	c, err := Open(Options{Dir: crashed, SyncWrites: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var damage *LogDamageError
	if errors.As(err, &damage) {
		t.Fatalf("start after a crash refused as damage, though no commit is missing: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := getKey(c, "a"); err != nil || v != "1" {
		t.Fatalf("a: %q %v", v, err)
	}
}
