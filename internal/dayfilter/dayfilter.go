package dayfilter

import (
	"sync"

	"github.com/dgraph-io/ristretto/v2/z"
)

// Entries sizes each day's filter (1.2 MiB at 1 % false positives). A filter fuller
// than planned only answers "maybe" more often, so the memory stays fixed however
// many keys come.
const Entries = 1 << 20

// Filter holds one Bloom filter over the keys stored before Load, and one for each of
// the two newest days keys were added on. Days are numbers the caller chooses (Unix
// days); hashes must be well mixed. A false positive only costs the read the caller
// would have made anyway.
type Filter struct {
	mu      sync.Mutex
	loaded  bool
	atStart *z.Bloom
	day     int64       // the newest day added to, that of days[0]
	days    [2]*z.Bloom // keys added on day and on the day before
}

// Load records the keys stored before any was added: add is called with each key's
// hash. Until Load, nothing is ruled out.
func (f *Filter) Load(scan func(add func(hash uint64)) error) error {
	var hashes []uint64
	if err := scan(func(h uint64) { hashes = append(hashes, h) }); err != nil {
		return err
	}
	b := z.NewBloomFilter(float64(max(len(hashes), 1024)), 0.01)
	for _, h := range hashes {
		b.Add(h)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.atStart, f.loaded = b, true
	return nil
}

// Add records that the key of hash may be written on day from now on. It must be
// called before the commit that writes it, so that the next commit to ask finds it.
// Reaching a newer day lets the filters of the days before the previous one go.
func (f *Filter) Add(day int64, hash uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.days[0] == nil || day >= f.day+2:
		f.days = [2]*z.Bloom{z.NewBloomFilter(Entries, 0.01), nil}
		f.day = day
	case day == f.day+1:
		f.days = [2]*z.Bloom{z.NewBloomFilter(Entries, 0.01), f.days[0]}
		f.day = day
	case day == f.day-1:
		// A key of the day before, added after one of the new day (two commits
		// stamped either side of midnight, the later first): MayContain asks the
		// day before's filter for it.
		if f.days[1] == nil {
			f.days[1] = z.NewBloomFilter(Entries, 0.01)
		}
		f.days[1].Add(hash)
		return
	}
	// A day older still (a clock set back) goes into the newest's filter, which is
	// kept at least as long; MayContain never rules such a day out.
	f.days[0].Add(hash)
}

// MayContain reports whether the key of hash, written on day, may be stored: false
// means it certainly is not. A day whose filter was let go, or any day before it (a
// clock set back), is never ruled out.
func (f *Filter) MayContain(day int64, hash uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case !f.loaded, f.days[0] != nil && day < f.day-1, f.atStart.Has(hash):
		return true
	case f.days[0] == nil || day > f.day:
		return false
	}
	b := f.days[f.day-day]
	return b != nil && b.Has(hash)
}
