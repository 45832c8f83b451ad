package store

import (
	"encoding/binary"
	"sync"

	"github.com/dgraph-io/ristretto/v2/z"
)

// readerFilter answers "this reader record cannot exist" without a read. Most views
// come from a reader the day has not seen yet, and looking its record up searched
// Badger's memtables and levels for a key that is nowhere (a third of a view's commit).
// A reader key holds the IP hashed with its day's salt, so every key of a day is
// written during that day: a Bloom filter per day over the keys written since Open, and
// one over the keys that existed at Open, cover all of them. A false positive only
// costs the read it would have made anyway, and a filter fuller than planned only
// turns into more of those, so the memory stays fixed however many visitors come.
type readerFilter struct {
	mu     sync.Mutex
	atOpen *z.Bloom
	days   map[string]*z.Bloom
	// dropped is the newest day whose filter was let go: for it and any day before it
	// (a clock set back) nothing can be ruled out.
	dropped string
}

const (
	// readerFilterEntries sizes each day's filter (1.2 MiB at 1 % false positives).
	readerFilterEntries = 1 << 20
	// readerFilterDays is how many days' filters are kept: today's and yesterday's,
	// whose records a view in the first dedup window after midnight reads.
	readerFilterDays = 2
)

func readerFilterHash(hash []byte) uint64 { return binary.BigEndian.Uint64(hash) }

// mayExist reports whether the reader record of hash (salted with day's salt) may be
// stored; false means it is certainly not.
func (f *readerFilter) mayExist(day string, hash []byte) bool {
	h := readerFilterHash(hash)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropped != "" && day <= f.dropped {
		return true
	}
	if f.atOpen != nil && f.atOpen.Has(h) {
		return true
	}
	b := f.days[day]
	return b != nil && b.Has(h)
}

// add records that the reader record of hash, salted with day's salt, is being written.
// It must be called before the commit that writes it publishes, so that the next
// commit to ask already finds it.
func (f *readerFilter) add(day string, hash []byte) {
	h := readerFilterHash(hash)
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.days[day]
	if b == nil {
		b = f.newDay(day)
	}
	b.Add(h)
}

// newDay starts day's filter, letting the oldest go beyond readerFilterDays.
func (f *readerFilter) newDay(day string) *z.Bloom {
	if f.days == nil {
		f.days = map[string]*z.Bloom{}
	}
	b := z.NewBloomFilter(readerFilterEntries, 0.01)
	f.days[day] = b
	for len(f.days) > readerFilterDays {
		oldest := ""
		for d := range f.days {
			if oldest == "" || d < oldest {
				oldest = d
			}
		}
		delete(f.days, oldest)
		if oldest > f.dropped {
			f.dropped = oldest
		}
	}
	return b
}

// loadReaders fills the filter with the reader records stored at Open.
func (s *Store) loadReaders() error {
	var hashes []uint64
	err := s.view(func(txn *tx) error {
		return scanKeys(txn, prefixReader, func(key []byte) {
			if hash := key[len(prefixReader):]; len(hash) >= 8 {
				hashes = append(hashes, readerFilterHash(hash))
			}
		})
	})
	if err != nil || len(hashes) == 0 {
		return err
	}
	b := z.NewBloomFilter(float64(max(len(hashes), 1024)), 0.01)
	for _, h := range hashes {
		b.Add(h)
	}
	s.readers.mu.Lock()
	s.readers.atOpen = b
	s.readers.mu.Unlock()
	return nil
}
