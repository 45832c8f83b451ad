package store

import (
	"errors"
	"math/bits"
	"strconv"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/hangarhq/hangar/internal/dayfilter"
)

// Seen-markers remember the update_ids accepted or processed in the last 24 hours,
// so that a Telegram re-delivery is acknowledged without being processed again. They
// are kept as bits in blocks of seenBlockBits consecutive update_ids, one key a block
// (seenblk:{updateID / seenBlockBits}): Telegram numbers a bot's updates
// consecutively, so the updates of a second share a handful of keys, and the commits
// of a busy second write the same keys over and over instead of one new key each that
// Badger had to take in (a key per update was 70 % of the webhook's entries reaching
// Badger, and about a sixth of its allocations). A block lives SeenUpdateTTL after
// its newest bit was set, so every marker lives at least that long.
const (
	seenBlockBits  = 1024
	seenBlockBytes = seenBlockBits / 8
)

func seenBlockKey(updateID int64) []byte {
	return u64Key(prefixSeenBlock, uint64(updateID)/seenBlockBits)
}

// seenBit is updateID's byte and bit in its block.
func seenBit(updateID int64) (int, byte) {
	n := uint64(updateID) % seenBlockBits
	return int(n / 8), 1 << (n % 8)
}

// hasSeenMarker reads updateID's bit.
func hasSeenMarker(txn *tx, updateID int64) (bool, error) {
	item, err := txn.Get(seenBlockKey(updateID))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	at, bit := seenBit(updateID)
	seen := false
	err = item.Value(func(v []byte) error {
		seen = at < len(v) && v[at]&bit != 0
		return nil
	})
	return seen, err
}

// setSeenMarker sets updateID's bit, the block's other bits kept.
func setSeenMarker(txn *tx, updateID int64) error {
	key := seenBlockKey(updateID)
	block := make([]byte, seenBlockBytes)
	item, err := txn.Get(key)
	switch {
	case err == nil:
		if err := item.Value(func(v []byte) error { copy(block, v); return nil }); err != nil {
			return err
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		return err
	}
	at, bit := seenBit(updateID)
	block[at] |= bit
	return txn.PutOwned(key, block, seenExpiry(), false)
}

// scanSeenMarkers calls fn with every update_id marked in a stored block.
func scanSeenMarkers(txn *tx, fn func(updateID int64)) error {
	return scanPrefix(txn, prefixSeenBlock, false, func(key, val []byte) (bool, error) {
		base := int64(u64FromKey(prefixSeenBlock, key) * seenBlockBits)
		for i, b := range val {
			for ; b != 0; b &= b - 1 {
				fn(base + int64(i*8+bits.TrailingZeros8(b)))
			}
		}
		return true, nil
	})
}

// moveSeenMarkersToBlocks is the migration from one key a marker (seen:{updateID},
// before schema 6) to blocks. The old keys are left to their 24 h TTL rather than
// deleted: nothing reads them any more, and a busy bot's day of markers deleted in the
// migration's one commit would make it as large as the day's updates.
func moveSeenMarkersToBlocks(txn *tx) error {
	var ids []int64
	if err := scanKeys(txn, prefixSeenUpdate, func(key []byte) {
		if id, err := strconv.ParseInt(string(key[len(prefixSeenUpdate):]), 10, 64); err == nil {
			ids = append(ids, id)
		}
	}); err != nil {
		return err
	}
	for _, id := range ids {
		if err := setSeenMarker(txn, id); err != nil {
			return err
		}
	}
	return nil
}

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

// idHash mixes an id (an update_id, a user id) for the filters, which take their bit
// positions from the hash's two halves.
func idHash(updateID int64) uint64 {
	// splitmix64's finaliser: ids are often consecutive.
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
func (f *seenFilter) add(updateID int64) { f.f.Add(f.today(), idHash(updateID)) }

// mayBeSeen is false when updateID certainly has no marker; true counts a lookup.
func (f *seenFilter) mayBeSeen(updateID int64) bool {
	day, h := f.today(), idHash(updateID)
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
			return scanSeenMarkers(txn, func(id int64) { add(idHash(id)) })
		})
	})
}

// seenMarker reports whether updateID has a seen-marker that txn can read, reading it
// only when the filter cannot rule it out.
func (s *Store) seenMarker(txn *tx, updateID int64) (bool, error) {
	if !s.seen.mayBeSeen(updateID) {
		return false, nil
	}
	return hasSeenMarker(txn, updateID)
}

// putSeenMarker writes updateID's marker in txn, telling the filter first.
func (s *Store) putSeenMarker(txn *tx, updateID int64) error {
	s.seen.add(updateID)
	return setSeenMarker(txn, updateID)
}

// seenExpiry is when a marker set now expires: a second over SeenUpdateTTL, since
// expiry rounds down to the second and a key is gone once its second begins; a marker
// set late in a second lived almost a second less than the 24 h Telegram redelivers
// for.
func seenExpiry() uint64 { return expiry(SeenUpdateTTL + time.Second) }
