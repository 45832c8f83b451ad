package kv

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// A stop while the log cannot start its next segment (the disk failing each attempt)
// leaves no half-written segment behind: the next start found the header a failed
// attempt had begun ("segment header is cut short") and refused to start as a damaged
// log, though no commit was missing.
func TestStopWhileTheNextSegmentCannotStartIsNotDamage(t *testing.T) {
	dir := t.TempDir()
	f := newFaultSwitch(syscall.EIO, true)
	s := openFaulty(t, dir, f)
	if err := setKey(s, "a", "1"); err != nil {
		t.Fatal(err)
	}
	f.arm("write") // every write fails, the new segment's header too (half written)
	if err := setKey(s, "b", "2"); !errors.Is(err, ErrLogUnavailable) {
		t.Fatalf("commit with failing writes: %v", err)
	}
	for f.hits.Load() < 3 { // the frame, then at least two attempts at the next header
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f.arm("")
	s, err := openQuiet(dir)
	if err != nil {
		t.Fatalf("start after a stop while the log was failing: %v", err)
	}
	defer s.Close()
	if v, err := getKey(s, "a"); err != nil || v != "1" {
		t.Fatalf("a = %q, %v; want the acknowledged 1", v, err)
	}
}
