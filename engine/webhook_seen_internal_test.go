package engine

import (
	"testing"
	"time"
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
	if err := f.load(func(fn func(int64)) error {
		for id := int64(1); id <= 1000; id++ {
			fn(id)
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
