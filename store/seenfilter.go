package store

import (
	"strconv"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hangarhq/hangar/internal/dayfilter"
)

// The seen filter (Store.seen) answers "this update_id has no seen-marker" without a
// read. Nearly every update is fresh, and looking its marker up searched Badger's
// memtables and levels for a key that is nowhere: a tenth of a webhook update's CPU
// when the engine asked before running the bot, and 4 % again inside the update's own
// commit, which must ask too (a marker may have appeared since). Every marker is added
// inside the commit that writes it, before that commit can be followed by another, so
// any later commit or read that asks finds it; those stored before Open are loaded
// once. Markers live 24 h (their TTL, on the system clock), so one is looked for among
// those added today and yesterday.
type seenFilter struct {
	// now is the system clock, as the markers' TTLs are (tests set it).
	now func() time.Time
	f   dayfilter.Filter
	// lookups counts the markers the filter could not rule out, which were read.
	lookups atomic.Int64
}

func seenHash(updateID int64) uint64 {
	// splitmix64's finaliser: update_ids are consecutive, and the filter takes its
	// bit positions from the hash's two halves.
	h := uint64(updateID)
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 27)) * 0x94d049bb133111eb
	return h ^ (h >> 31)
}

// today is the filter's day now.
func (f *seenFilter) today() int64 {
	if f.now == nil {
		return time.Now().Unix() / 86400
	}
	return f.now().Unix() / 86400
}

// add records that updateID's marker may be written from now on.
func (f *seenFilter) add(updateID int64) { f.f.Add(f.today(), seenHash(updateID)) }

// mayBeSeen is false when updateID certainly has no marker; true counts a lookup.
func (f *seenFilter) mayBeSeen(updateID int64) bool {
	day, h := f.today(), seenHash(updateID)
	if !f.f.MayContain(day, h) && !f.f.MayContain(day-1, h) {
		return false
	}
	f.lookups.Add(1)
	return true
}

// loadSeen fills the filter with the markers stored at Open.
func (s *Store) loadSeen() error {
	return s.seen.f.Load(func(add func(uint64)) error {
		return s.view(func(txn *tx) error {
			return scanKeys(txn, prefixSeenUpdate, func(key []byte) {
				if id, err := strconv.ParseInt(string(key[len(prefixSeenUpdate):]), 10, 64); err == nil {
					add(seenHash(id))
				}
			})
		})
	})
}

// seenMarker reports whether updateID has a seen-marker that txn can read, reading it
// only when the filter cannot rule it out.
func (s *Store) seenMarker(txn *tx, updateID int64) (bool, error) {
	if !s.seen.mayBeSeen(updateID) {
		return false, nil
	}
	return exists(txn, seenUpdateKey(updateID))
}

// putSeenMarker writes updateID's marker in txn, telling the filter first.
func (s *Store) putSeenMarker(txn *tx, updateID int64) error {
	s.seen.add(updateID)
	return txn.SetEntry(badger.NewEntry(seenUpdateKey(updateID), nil).WithTTL(SeenUpdateTTL))
}
