package kv

import (
	"strings"
	"sync"
	"unsafe"
)

// cache keeps applied entries in the overlay after Badger has them, up to a byte
// budget: a commit's reads (a user's balance and order window, a slug's total, an order
// being moved along) then rarely reach Badger, whose lookups were most of a commit's
// time. One that was written again since is already superseded in the overlay and only
// leaves the queue.
//
// Eviction is second chance (CLOCK), not first in, first out: most of what flows
// through is written once and never read (a day's seen-marker per update, visitor-log
// slots), and under load it pushed a record read on nearly every request (a user's
// record on each of their updates) out every couple of seconds, each time costing a
// Badger lookup on the next read. An entry a read found since it was last looked at
// goes to the back of the queue instead of leaving.
type cache struct {
	mu     sync.Mutex
	s      *DB
	budget int
	bytes  int
	queue  []*walEntry
	head   int
	// pass says the budget is exceeded and entries are being taken off the front;
	// chances is how many more of them this pass may give a second chance to.
	pass    bool
	chances int
	// shrinking says the applier is evicting with mu let go between chunks; it evicts
	// for what remember adds meanwhile too.
	shrinking bool
}

// entryOverhead approximates the map slot, pointer and struct each entry costs.
const entryOverhead = 96

func entrySize(e *walEntry) int { return len(e.key) + len(e.val) + entryOverhead }

// admit records entries as applied and evicts beyond the budget. Only the applier
// calls it. It lets go of c.mu between chunks of eviction so that a commit
// remembering a value meanwhile waits for a chunk, not for the pass: when nearly
// everything was read, a pass looks at the whole queue, about 90 ms for 350,000
// entries on two cores, and with c.mu held throughout such a commit took 200 ms.
func (c *cache) admit(entries []*walEntry) {
	entries = c.dropUncached(entries)
	if c.budget > 0 {
		entries = c.detach(entries)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.budget <= 0 {
		c.evict(entries)
		return
	}
	for _, e := range entries {
		c.queue = append(c.queue, e)
		c.bytes += entrySize(e)
	}
	if c.shrinking {
		return
	}
	c.shrinking = true
	for c.shrink(evictChunk) {
		c.mu.Unlock()
		c.mu.Lock()
	}
	c.shrinking = false
}

const evictChunk = 1024

// dropUncached takes the entries marked uncached (Txn.MarkUncached) out of the overlay
// and returns the others, in entries' own array.
func (c *cache) dropUncached(entries []*walEntry) []*walEntry {
	var drop []*walEntry
	kept := entries[:0]
	for _, e := range entries {
		if e.uncached {
			drop = append(drop, e)
		} else {
			kept = append(kept, e)
		}
	}
	c.evict(drop)
	return kept
}

// detach returns what the cache keeps of a batch the applier wrote: for each entry
// still its key's current one, a copy that replaces it in the overlay, all of the
// batch's copies in one block and their keys in one arena.
//
// Why: a commit's entries are carved from blocks shared with the commits around it,
// their keys from shared arenas (Txn.newEntry, Txn.keyString), and most of a block's
// entries are superseded within the applier's batch (a user's window, an outlog slot,
// a slug's total written many times a second). One admitted entry kept its whole
// block alive, with every superseded value in it, for as long as the cache kept the
// entry: under the webhook's load the heap held every value written for as long as
// the cache's budget lasted, about ten times the budget. A batch's own block holds
// only entries the cache admitted, and they leave it in order.
func (c *cache) detach(entries []*walEntry) []*walEntry {
	keyBytes := 0
	for _, e := range entries {
		keyBytes += len(e.key)
	}
	block := make([]walEntry, len(entries))
	keys := make([]byte, 0, keyBytes)
	kept := entries[:0]
	for i := 0; i < len(entries); i += evictChunk {
		c.s.ovMu.Lock()
		for j, e := range entries[i:min(i+evictChunk, len(entries))] {
			if c.s.overlay[e.key] != e {
				continue // superseded: only the applier's batch still holds it
			}
			n := len(keys)
			keys = append(keys, e.key...)
			cp := &block[i+j]
			cp.key = unsafe.String(unsafe.SliceData(keys[n:]), len(e.key))
			cp.val, cp.expiresAt, cp.deleted, cp.gen, cp.applied = e.val, e.expiresAt, e.deleted, e.gen, true
			cp.ref.Store(e.ref.Load())
			cp.durable.Store(true)
			// Assigning to an existing string key stores the new key too, so the map
			// no longer holds the commit's key arena either.
			c.s.overlay[cp.key] = cp
			kept = append(kept, cp)
		}
		c.s.ovMu.Unlock()
	}
	clear(entries[len(kept):])
	return kept
}

// rememberWork is how many entries one remembered value may look at to make room for
// itself, so that a commit never pays for a whole pass. While the applier is not
// evicting, the budget is then exceeded by up to about 1/rememberWork of it: each
// look either frees an entry or spends one of the pass's second chances.
const rememberWork = 64

// shrink looks at up to limit entries at the front of the queue while the budget is
// exceeded, holding the overlay's lock for them, and reports whether it still is with
// entries left. A pass, from the budget exceeded to the budget holding again, may give
// a second chance only to as many entries as were queued when it began, each once: if
// every one was read, it still ends, evicting the oldest in order, even while readers
// keep setting their bits again.
func (c *cache) shrink(limit int) bool {
	if !c.pass {
		if c.bytes <= c.budget {
			return false
		}
		c.pass, c.chances = true, len(c.queue)-c.head
	}
	c.s.ovMu.Lock()
	for n := 0; n < limit && c.bytes > c.budget && c.head < len(c.queue); n++ {
		e := c.queue[c.head]
		c.queue[c.head] = nil
		c.head++
		current := c.s.overlay[e.key] == e
		if c.chances > 0 {
			c.chances--
			// A superseded entry is dropped whatever its bit: its key's newer entry,
			// once admitted, holds the bit that counts.
			if current && e.ref.Load() {
				c.queue = append(c.queue, c.requeue(e))
				continue
			}
		}
		c.bytes -= entrySize(e)
		if current {
			delete(c.s.overlay, e.key)
		}
	}
	c.s.ovMu.Unlock()
	if c.head > len(c.queue)/2 {
		c.queue = append(c.queue[:0], c.queue[c.head:]...)
		c.head = 0
	}
	c.pass = c.bytes > c.budget && c.head < len(c.queue)
	return c.pass
}

// requeue clears e's bit and returns what goes to the back of the queue for it, with
// the overlay's lock held and e its key's current entry. An entry from a batch's
// block is replaced in the overlay by a copy made alone: the block's other entries
// leave the cache about together (cache.detach), and a long-lived one among them
// would keep all their values alive outside the budget. The copy is the same
// applied value, so nothing a reader or the applier can tell apart; a reader holding
// the original meanwhile only loses its mark, which the next read sets again.
func (c *cache) requeue(e *walEntry) *walEntry {
	e.ref.Store(false)
	if e.own {
		return e
	}
	cp := &walEntry{key: strings.Clone(e.key), val: e.val, expiresAt: e.expiresAt, deleted: e.deleted, gen: e.gen, own: true, applied: true}
	cp.durable.Store(e.durable.Load())
	c.s.overlay[cp.key] = cp
	return cp
}

// evict drops entries from the overlay unless they were superseded, in chunks so that
// readers and commits are never held up long.
func (c *cache) evict(entries []*walEntry) {
	for i := 0; i < len(entries); i += evictChunk {
		c.s.ovMu.Lock()
		for _, e := range entries[i:min(i+evictChunk, len(entries))] {
			if c.s.overlay[e.key] == e {
				delete(c.s.overlay, e.key)
			}
		}
		c.s.ovMu.Unlock()
	}
}

// remember caches a value a commit read from Badger. Commits run one at a time and only
// they publish ordinary keys, so nothing newer can slip in between the read and this: an
// existing entry is newer and is kept.
func (c *cache) remember(key []byte, val []byte, expiresAt uint64) {
	if c.budget <= 0 {
		return
	}
	e := &walEntry{key: string(key), val: val, expiresAt: expiresAt, own: true, applied: true}
	e.durable.Store(true) // Badger's
	c.s.ovMu.Lock()
	_, ok := c.s.overlay[e.key]
	if !ok {
		c.s.overlay[e.key] = e
	}
	c.s.ovMu.Unlock()
	if ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, e)
	c.bytes += entrySize(e)
	if !c.shrinking {
		c.shrink(rememberWork)
	}
}
