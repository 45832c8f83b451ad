package store

import (
	"math"
	"strconv"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// The filter never rules out a marker it was told of (loaded or added within the last
// day), rules out nothing before it is loaded, and lets a day's markers go once the
// day after it has passed, as their TTL does.
func TestSeenFilterRulesOutOnlyMarkersThatCannotExist(t *testing.T) {
	now := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	f := &seenFilter{now: func() time.Time { return now }}
	if !f.mayBeSeen(1) {
		t.Fatal("an update_id was ruled out before the stored markers were loaded")
	}
	if err := f.f.Load(func(add func(uint64)) error {
		for id := int64(1); id <= 1000; id++ {
			add(idHash(id))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id := int64(2000); id < 12000; id++ {
		f.add(id)
	}
	for id := int64(1); id <= 1000; id++ {
		if !f.mayBeSeen(id) {
			t.Fatalf("stored marker %d ruled out", id)
		}
	}
	for id := int64(2000); id < 12000; id++ {
		if !f.mayBeSeen(id) {
			t.Fatalf("added marker %d ruled out", id)
		}
	}
	ruledOut := 0
	for id := int64(1_000_000); id < 1_010_000; id++ {
		if !f.mayBeSeen(id) {
			ruledOut++
		}
	}
	if ruledOut < 9_700 { // 1 % false positives planned
		t.Fatalf("only %d of 10000 unknown update_ids ruled out", ruledOut)
	}

	now = now.Add(2 * time.Hour) // the next day: yesterday's markers still live
	f.add(20_000)
	if !f.mayBeSeen(2000) || !f.mayBeSeen(20_000) {
		t.Fatal("a marker of the last 24 h was ruled out after midnight")
	}
	now = now.Add(24 * time.Hour) // two days after the first: its markers have expired
	f.add(30_000)
	if !f.mayBeSeen(20_000) || !f.mayBeSeen(30_000) {
		t.Fatal("a marker of the last 24 h was ruled out")
	}
	gone := 0
	for id := int64(2000); id < 12000; id++ {
		if !f.mayBeSeen(id) {
			gone++
		}
	}
	if gone < 9_700 {
		t.Fatalf("only %d of the 10000 markers older than two days were let go", gone)
	}
	now = now.Add(72 * time.Hour) // a jump: everything added before has expired
	f.add(40_000)
	if f.mayBeSeen(30_000) && f.mayBeSeen(20_000) {
		t.Fatal("markers older than two days still kept after a jump")
	}
	if !f.mayBeSeen(40_000) || !f.mayBeSeen(500) {
		t.Fatal("a live or stored marker was ruled out after a jump")
	}
}

// Through the store: a fresh update_id is never looked up, in ProcessUpdate's commit,
// AcceptUpdate's or UpdateSeen; a repeat is, and is found, also after a restart, when
// the filter is loaded from the markers stored; a marker added by one door is found
// by the other.
func TestSeenMarkersAreReadOnlyForPossibleRepeats(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	defer func() { s.Close() }()
	type step struct {
		name       string
		do         func(id int64) (fresh bool, err error)
		id         int64
		wantFresh  bool
		wantLookup int64 // lookups the step adds
	}
	process := func(id int64) (bool, error) {
		_, err := s.ProcessUpdate(UpdateOutcome{UpdateID: id, UserID: 5})
		if err == ErrAlreadyProcessed {
			return false, nil
		}
		return err == nil, err
	}
	accept := func(id int64) (bool, error) { return s.AcceptUpdate(id, []byte(`{}`)) }
	unseen := func(id int64) (bool, error) {
		seen, err := s.UpdateSeen(id)
		return !seen, err
	}
	steps := []step{
		{"a fresh update through the webhook", process, 1, true, 0},
		{"a fresh update through the inbox", accept, 2, true, 0},
		{"an unknown update_id asked about", unseen, 3, true, 0},
		{"the webhook's update asked about", unseen, 1, false, 1},
		{"a repeat through the webhook", process, 1, false, 1},
		{"the inbox's update repeated through the webhook", process, 2, false, 1},
		{"the webhook's update repeated through the inbox", accept, 1, false, 1},
	}
	run := func(steps []step) {
		for _, st := range steps {
			before := s.seen.lookups.Load()
			fresh, err := st.do(st.id)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if fresh != st.wantFresh {
				t.Fatalf("%s: fresh = %v, want %v", st.name, fresh, st.wantFresh)
			}
			if n := s.seen.lookups.Load() - before; n != st.wantLookup {
				t.Fatalf("%s: %d marker lookups, want %d", st.name, n, st.wantLookup)
			}
		}
	}
	run(steps)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	run([]step{
		{"after a restart, a repeat through the webhook", process, 1, false, 1},
		{"after a restart, a repeat through the inbox", accept, 2, false, 1},
		{"after a restart, a fresh update", process, 4, true, 0},
	})
}

// Markers are bits in blocks: each update_id is found exactly, across block edges and
// far apart, marking one leaves its neighbours unmarked, and a restart finds them all
// (read back from the blocks into the filter).
func TestSeenMarkersInBlocks(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	defer func() { s.Close() }()
	marked := []int64{1, 1022, 1023, 1024, 1025, 2047, 2048, 5_000_000_000, 1 << 40, math.MaxInt64}
	unmarked := []int64{2, 1021, 1026, 2046, 2049, 4_999_999_999, 5_000_000_001, 1<<40 + 1, math.MaxInt64 - 1}
	for _, id := range marked {
		if fresh, err := s.AcceptUpdate(id, []byte(`{}`)); err != nil || !fresh {
			t.Fatalf("accept %d: fresh %v, %v", id, fresh, err)
		}
	}
	check := func(when string) {
		t.Helper()
		for _, id := range marked {
			if seen, err := s.UpdateSeen(id); err != nil || !seen {
				t.Fatalf("%s: update %d not seen (%v)", when, id, err)
			}
		}
		for _, id := range unmarked {
			if seen, err := s.UpdateSeen(id); err != nil || seen {
				t.Fatalf("%s: update %d seen, never marked (%v)", when, id, err)
			}
		}
	}
	check("before a restart")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	check("after a restart")
	var loaded []int64
	if err := s.view(func(txn *tx) error { return scanSeenMarkers(txn, func(id int64) { loaded = append(loaded, id) }) }); err != nil {
		t.Fatal(err)
	}
	if len(loaded) != len(marked) {
		t.Fatalf("blocks hold %v, want %v", loaded, marked)
	}
}

// A store written before schema 6 keeps one key a marker: the migration moves each
// into its block, so a re-delivery of an update accepted before the upgrade is still
// a duplicate, also once the old keys are gone (they are left to their TTL).
func TestSeenMarkersMigrateToBlocks(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	old := []int64{7, 1500, 1501}
	err := s.update(func(txn *tx) error {
		for _, id := range old {
			key := strconv.AppendInt([]byte(prefixSeenUpdate), id, 10)
			if err := txn.SetEntry(badger.NewEntry(key, nil).WithTTL(SeenUpdateTTL)); err != nil {
				return err
			}
		}
		return txn.Set([]byte(metaSchemaVersion), []byte("5"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	for _, id := range old {
		if _, err := s.ProcessUpdate(UpdateOutcome{UpdateID: id, UserID: 3}); err != ErrAlreadyProcessed {
			t.Fatalf("update %d accepted before the upgrade: %v, want ErrAlreadyProcessed", id, err)
		}
	}
	if _, err := s.ProcessUpdate(UpdateOutcome{UpdateID: 8, UserID: 3}); err != nil {
		t.Fatalf("a fresh update after the upgrade: %v", err)
	}
	// As if their TTL had passed: the blocks alone answer.
	if err := s.update(dropPrefix(prefixSeenUpdate)); err != nil {
		t.Fatal(err)
	}
	for _, id := range old {
		if seen, err := s.UpdateSeen(id); err != nil || !seen {
			t.Fatalf("update %d not seen once the old keys are gone (%v)", id, err)
		}
	}
}

// A seen-marker outlives the 24 h in which Telegram delivers an update again, even
// when set late in a second (expiry rounds down to the second).
func TestSeenMarkerLivesAtLeastTheTTL(t *testing.T) {
	for time.Now().Nanosecond() < 900_000_000 {
		time.Sleep(time.Millisecond)
	}
	set := time.Now()
	if gone := time.Unix(int64(seenExpiry()), 0); gone.Sub(set) < SeenUpdateTTL {
		t.Fatalf("a marker set at %s expires at %s: it lives %s, less than %s", set, gone, gone.Sub(set), SeenUpdateTTL)
	}
}
