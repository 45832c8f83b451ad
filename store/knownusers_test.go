package store

import (
	"errors"
	"testing"
	"time"
)

// Nothing stored of a user means no read: their window and their record are ruled
// out without searching Badger. Whatever is stored of a user (a record, a window, a
// blocked mark) is still read, also after a restart, when the filter is loaded from
// the records and windows stored.
func TestKnownUsersSpareOnlyReadsOfUsersWithNothingStored(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	defer func() { s.Close() }()
	now := time.Now()
	badgerReads := func() int64 { return s.LogStats().BadgerReads }
	window := func(user int64) (Window, error) { return s.LoadWindow(user) }

	// The update_ids' block exists already: its first write read Badger once.
	if _, err := s.AcceptUpdate(2, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	before := badgerReads()
	if _, err := window(41); !errors.Is(err, ErrNotFound) {
		t.Fatalf("window of a user never seen: %v, want ErrNotFound", err)
	}
	w := Window{Count: 2, ResetAt: now.Add(time.Minute)}
	if _, err := s.ProcessUpdate(UpdateOutcome{UpdateID: 1, UserID: 41, Window: &w}); err != nil {
		t.Fatal(err)
	}
	if n := badgerReads() - before; n != 0 {
		t.Fatalf("%d Badger reads for a new user's window and record, want 0", n)
	}
	// A window stored without a record (a store from before the records existed),
	// and a blocked mark of a user never seen.
	if err := s.update(func(txn *tx) error { return s.putWindow(txn, 42, w, now) }); err != nil {
		t.Fatal(err)
	}
	if err := s.update(func(txn *tx) error { return s.markUserBlocked(txn, 43, now) }); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, user := range []int64{41, 42} {
			got, err := window(user)
			if err != nil || got.Count != 2 {
				t.Fatalf("%s: window of user %d = %+v, %v", when, user, got, err)
			}
		}
		if blocked, err := s.UserBlocked(43); err != nil || !blocked {
			t.Fatalf("%s: user 43 blocked = %v, %v", when, blocked, err)
		}
	}
	check("before a restart")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	check("after a restart")
	// A blocked user who writes again is seen, and no longer blocked: the record was
	// read, not written over as a new user's.
	if _, err := s.ProcessUpdate(UpdateOutcome{UpdateID: 3, UserID: 43}); err != nil {
		t.Fatal(err)
	}
	if blocked, _ := s.UserBlocked(43); blocked {
		t.Fatal("a blocked user who wrote again is still blocked")
	}
}
