package dayfilter

import (
	"encoding/binary"
	"testing"
)

func hashOf(s string) uint64 { return binary.BigEndian.Uint64([]byte(s)) }

// The days are 2026-11-29 and the two after it, as Unix days.
const nov29 = 20_421

func TestRulesOutOnlyWhatWasNeverAdded(t *testing.T) {
	var f Filter
	if err := f.Load(func(func(uint64)) error { return nil }); err != nil {
		t.Fatal(err)
	}
	added := hashOf("0123456789abcdef")
	other := hashOf("fedcba9876543210")
	if f.MayContain(nov29, added) {
		t.Fatal("an empty filter must rule out every record")
	}
	f.Add(nov29, added)
	if !f.MayContain(nov29, added) {
		t.Fatal("a record added must never be ruled out")
	}
	if f.MayContain(nov29+1, added) {
		t.Fatal("a record is salted with its own day: another day's filter must rule it out")
	}
	if f.MayContain(nov29, other) {
		t.Fatal("a record never added was not ruled out (a false positive on a near-empty filter)")
	}
	f.Add(nov29+1, other)
	f.Add(nov29+2, other) // lets nov29 go
	if !f.MayContain(nov29, other) || !f.MayContain(nov29-1, other) {
		t.Fatal("a day whose filter was let go, or an earlier one, must not be ruled out")
	}
}

func TestNothingRuledOutBeforeLoadAndStoredKeysNever(t *testing.T) {
	var f Filter
	if !f.MayContain(nov29, 42) {
		t.Fatal("a key was ruled out before the stored keys were loaded")
	}
	if err := f.Load(func(add func(uint64)) error { add(42); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, day := range []int64{nov29 - 5, nov29, nov29 + 5} {
		if !f.MayContain(day, 42) {
			t.Fatalf("a stored key was ruled out for day %d", day)
		}
	}
}

// A key of the day before added after one of the new day (commits stamped either side
// of midnight, committed in the other order) is not ruled out for its own day: it went
// into the new day's filter, and a view counted just before midnight was counted again
// just after.
func TestKeyOfTheDayBeforeAddedLateIsKept(t *testing.T) {
	for _, started := range []bool{false, true} { // with and without a filter for the day before
		var f Filter
		if err := f.Load(func(func(uint64)) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if started {
			f.Add(nov29, hashOf("aaaaaaaaaaaaaaaa"))
		}
		f.Add(nov29+1, hashOf("0123456789abcdef"))
		late := hashOf("fedcba9876543210")
		f.Add(nov29, late)
		if !f.MayContain(nov29, late) {
			t.Fatalf("a key added late for the day before is ruled out (a filter for that day before: %v)", started)
		}
		if !f.MayContain(nov29+1, hashOf("0123456789abcdef")) {
			t.Fatal("the new day's key is ruled out")
		}
	}
}
