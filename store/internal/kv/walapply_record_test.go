package kv

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"
)

// When Badger takes a batch but not the record of how far it now holds the log, the
// segments the batch closed stay until a later record covers them. They were removed
// all the same, and a crash before the next record was refused at the start as a
// missing segment ("Badger holds none of it"), though Badger held every commit.
func TestSegmentsStayWhileTheAppliedRecordFails(t *testing.T) {
	dir := t.TempDir()
	f := newFaultSwitch(syscall.EIO, false)
	blocked, release := make(chan struct{}), make(chan struct{})
	var holdFirst, releaseOnce sync.Once
	failed, third, resume := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var resumeOnce sync.Once
	calls := 0
	applyRecordFault = func() error {
		calls++ // only the applier calls it, one call at a time
		switch calls {
		case 2:
			close(failed)
			return errors.New("record refused (injected)")
		case 3:
			close(third)
			<-resume
		}
		return nil
	}
	defer func() { applyRecordFault = nil }()
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler), logFault: f.fault,
		applyFault: func() error {
			// The applier's first batch waits, so that the next one holds a commit and
			// the segment closed after it.
			holdFirst.Do(func() {
				close(blocked)
				<-release
			})
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Run before Close, should the test stop early: the applier may be held.
	defer releaseOnce.Do(func() { close(release) })
	defer resumeOnce.Do(func() { close(resume) })
	if err := setKey(s, "x", "0"); err != nil {
		t.Fatal(err)
	}
	<-blocked
	if err := setKey(s, "a", "1"); err != nil {
		t.Fatal(err)
	}
	f.arm("write")
	if err := setKey(s, "b", "2"); err == nil {
		t.Fatal("the armed write did not fail")
	}
	for s.Ping(context.Background()) != nil { // the log moved to the next segment
		time.Sleep(time.Millisecond)
	}
	releaseOnce.Do(func() { close(release) })
	<-failed
	go setKey(s, "c", "3") // the next batch, whose record is held until the copy is made
	<-third
	crashed := copyDir(t, dir)
	resumeOnce.Do(func() { close(resume) })

	c, err := openQuiet(crashed)
	if err != nil {
		t.Fatalf("start after a crash while Badger's record lagged: %v", err)
	}
	defer c.Close()
	for k, want := range map[string]string{"x": "0", "a": "1"} {
		if v, err := getKey(c, k); err != nil || v != want {
			t.Fatalf("%s = %q, %v; want %q", k, v, err, want)
		}
	}
}
