package kv

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// An empty segment (one whose first write failed holds only its header) closed in the
// same applier batch as commits of the segment before it is covered by Badger's record
// of how far it holds the log before it is removed. The record stopped at the last
// commit's frame, the empty segment was removed with the one before it, and a crash
// before the next batch was refused at the start as a missing segment ("it held 32
// bytes"), though no commit was missing.
func TestEmptySegmentClosedWithCommitsIsCoveredBeforeRemoval(t *testing.T) {
	dir := t.TempDir()
	f := newFaultSwitch(syscall.ENOSPC, false)
	blocked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var holding sync.Once
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler), logFault: f.fault,
		applyFault: func() error {
			// The applier's first batch waits, so that what follows reaches it in one.
			holding.Do(func() {
				close(blocked)
				<-release
			})
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer once.Do(func() { close(release) })
	defer s.Close()
	if err := setKey(s, "x", "0"); err != nil {
		t.Fatal(err)
	}
	<-blocked
	first, _ := walSegments(dirWAL(dir))
	writable := func() {
		for s.Ping(context.Background()) != nil {
			time.Sleep(time.Millisecond)
		}
	}
	if err := setKey(s, "a", "1"); err != nil {
		t.Fatal(err)
	}
	f.arm("write")
	if err := setKey(s, "b", "2"); err == nil {
		t.Fatal("the armed write did not fail")
	}
	writable()
	f.arm("write") // the new segment's first write
	if err := setKey(s, "c", "3"); err == nil {
		t.Fatal("the armed write did not fail")
	}
	writable()
	once.Do(func() { close(release) })
	last := first[len(first)-1] + 2
	for {
		if segs, _ := walSegments(dirWAL(dir)); slices.Equal(segs, []uint64{last}) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	crashed := copyDir(t, dir)

	c, err := openQuiet(crashed)
	var damage *LogDamageError
	if errors.As(err, &damage) {
		t.Fatalf("start after a crash refused as damage, though no commit is missing: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for k, want := range map[string]string{"x": "0", "a": "1"} {
		if v, err := getKey(c, k); err != nil || v != want {
			t.Fatalf("%s = %q, %v; want %q", k, v, err, want)
		}
	}
}
