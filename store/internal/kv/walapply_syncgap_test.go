package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// Segments the applier kept because Badger's sync failed are removed, in order, with
// the next ones once a sync works, never skipped. They were kept for good while the
// later ones went: the log then had a hole, and the next start, after a crash or a
// clean stop, was refused as damaged ("the segment is missing between").
func TestSegmentsKeptForAFailedBadgerSyncGoInOrder(t *testing.T) {
	limit, after := walSegmentLimit, walPrepareAfter
	walSegmentLimit, walPrepareAfter = 16<<10, 1<<30 // a segment every 30 commits, none prepared
	defer func() { walSegmentLimit, walPrepareAfter = limit, after }()
	dir := t.TempDir()
	var failing atomic.Bool
	var syncs, failed atomic.Int64
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler),
		badgerSyncFault: func() error {
			syncs.Add(1)
			if failing.Load() {
				failed.Add(1)
				return errors.New("sync failed (injected)")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) { t.Helper(); writeSegKeys(t, s, from, to) }
	failing.Store(true)
	write(0, 100) // a few small segments
	for failed.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	failing.Store(false)
	from := syncs.Load()
	write(100, 200)
	for syncs.Load() <= from { // a sync that worked, and the removals after it
		time.Sleep(time.Millisecond)
	}
	if err := s.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	segs, _ := walSegments(dirWAL(dir))
	for i := 1; i < len(segs); i++ {
		if segs[i] != segs[i-1]+1 {
			t.Fatalf("segments left %v: a hole in the log", segs)
		}
	}
	crashed := copyDir(t, dir)
	s.Close()
	c, err := openQuiet(crashed)
	if err != nil {
		t.Fatalf("start after a crash, segments %v: %v", segs, err)
	}
	defer c.Close()
	for i := range 200 {
		if v, err := getKey(c, fmt.Sprintf("seg-%04d", i)); err != nil || v != segValue {
			t.Fatalf("key %d = %d bytes, %v", i, len(v), err)
		}
	}
}
