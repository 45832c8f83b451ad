package kv

import "sync"

// cache keeps applied entries in the overlay after Badger has them, newest last, up
// to a byte budget: a commit's reads (a user's balance and order window, a slug's
// total, an order being moved along) then rarely reach Badger, whose lookups were most
// of a commit's time. Entries leave oldest first; one that was written again since is
// already superseded in the overlay and only leaves the queue.
type cache struct {
	mu     sync.Mutex
	s      *DB
	budget int
	bytes  int
	queue  []*walEntry
	head   int
}

// entryOverhead approximates the map slot, pointer and struct each entry costs.
const entryOverhead = 96

func entrySize(e *walEntry) int { return len(e.key) + len(e.val) + entryOverhead }

// admit records entries as applied and evicts beyond the budget. Only the applier
// calls it.
func (c *cache) admit(entries []*walEntry) {
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
	if c.bytes <= c.budget {
		return
	}
	var doomed []*walEntry
	for c.bytes > c.budget && c.head < len(c.queue) {
		e := c.queue[c.head]
		c.queue[c.head] = nil
		c.head++
		c.bytes -= entrySize(e)
		doomed = append(doomed, e)
	}
	if c.head > len(c.queue)/2 {
		c.queue = append(c.queue[:0], c.queue[c.head:]...)
		c.head = 0
	}
	c.evict(doomed)
}

const evictChunk = 1024

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
	e := &walEntry{key: string(key), val: val, expiresAt: expiresAt}
	e.durable.Store(true) // Badger's
	c.s.ovMu.Lock()
	_, ok := c.s.overlay[e.key]
	if !ok {
		c.s.overlay[e.key] = e
	}
	c.s.ovMu.Unlock()
	if !ok {
		c.admit([]*walEntry{e})
	}
}
