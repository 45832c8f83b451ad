package kv

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"
)

// tx is one commit's view of the store: reads see this commit's own writes first, then
// the overlay (committed, maybe not yet in Badger), then Badger. Writes stay in tx until
// the commit publishes them. Its methods mirror the part of *Txn hangar uses.
type Txn struct {
	s *DB
	// commit is false for a read-only view.
	commit bool
	// writes holds one entry per key, in the order the keys were first written: a
	// commit writes a few keys, which a linear scan finds sooner than a map. Past
	// indexAfter writes (migrations, imports, bulk deletes) index maps key to position.
	writes []*walEntry
	index  map[string]int
	// last is the position in writes of the key written last: MarkBorn and
	// MarkUncached follow the write they mark, and find it there without a search.
	last int
	// block is where entries are carved from, many commits' entries to an allocation;
	// keys, where their keys are copied to. Neither is ever written again where it was
	// handed out, which is what lets keys become strings without a copy.
	block []walEntry
	keys  []byte
	// items is where a commit's Gets carve their items from (never reused either).
	items []Item
	btxn  *badger.Txn
}

const (
	indexAfter = 16
	// entryBlock is how many entries one allocation holds. An entry keeps its whole
	// block alive; the cache keeps copies of what it admits (cache.detach), so a block
	// lives until the applier has taken its commits.
	entryBlock = 32
	keyBlock   = 1024
	itemBlock  = 32
	// keepWrites bounds the write set's capacity kept for the next commit.
	keepWrites = 1024
)

func (t *Txn) badger() *badger.Txn {
	if t.btxn == nil {
		// Reading at the newest version is safe: an overlay entry leaves the overlay only
		// after Badger holds it, and Badger holds nothing the overlay does not supersede.
		t.btxn = t.s.db.NewTransactionAt(math.MaxUint64, false)
	}
	return t.btxn
}

func (t *Txn) discard() {
	if t.btxn != nil {
		t.btxn.Discard()
		t.btxn = nil
	}
}

// reset ends a commit and readies t for the next one.
func (t *Txn) reset(published bool) {
	t.discard()
	if !published {
		// Only this commit held its entries: cleared, they do not keep their values
		// alive in the block they were carved from.
		for _, e := range t.writes {
			*e = walEntry{}
		}
	}
	clear(t.writes)
	t.writes = t.writes[:0]
	if cap(t.writes) > keepWrites {
		t.writes = nil
	}
	t.index, t.last = nil, 0
}

// find returns the position of key in writes, or -1.
func (t *Txn) find(key []byte) int {
	if t.index != nil {
		if i, ok := t.index[string(key)]; ok {
			return i
		}
		return -1
	}
	for i, e := range t.writes {
		if e.key == string(key) {
			return i
		}
	}
	return -1
}

// newEntry carves a zero entry out of the current block.
func (t *Txn) newEntry() *walEntry {
	if len(t.block) == cap(t.block) {
		t.block = make([]walEntry, 0, entryBlock)
	}
	t.block = t.block[:len(t.block)+1]
	return &t.block[len(t.block)-1]
}

// keyString returns key as a string, copied into the current key block: a string per
// write was the commit path's most frequent allocation.
func (t *Txn) keyString(key []byte) string {
	if len(key) == 0 || len(key) > keyBlock/4 {
		return string(key)
	}
	if cap(t.keys)-len(t.keys) < len(key) {
		t.keys = make([]byte, 0, keyBlock)
	}
	n := len(t.keys)
	t.keys = append(t.keys, key...)
	return unsafe.String(&t.keys[n], len(key))
}

// item returns an item holding key and val. A commit's come from a block: commits
// read a few keys each, and an item apiece was a twentieth of all allocations.
func (t *Txn) item(key, val []byte) *Item {
	if !t.commit {
		return &Item{key: key, val: val}
	}
	if len(t.items) == cap(t.items) {
		t.items = make([]Item, 0, itemBlock)
	}
	t.items = t.items[:len(t.items)+1]
	it := &t.items[len(t.items)-1]
	it.key, it.val = key, val
	return it
}

// lookup finds key among this commit's writes and the overlay. A commit sees every
// entry; a read-only view sees only durable ones (walEntry.visible).
func (t *Txn) lookup(key []byte) (*walEntry, bool) {
	if t.commit {
		if i := t.find(key); i >= 0 {
			return t.writes[i], true
		}
	}
	t.s.ovMu.RLock()
	e := t.s.overlay[string(key)]
	t.s.ovMu.RUnlock()
	// Stored only when clear: a key read on every request would otherwise have every
	// reader write the same cache line.
	if e != nil && !e.ref.Load() {
		e.ref.Store(true)
	}
	if !t.commit {
		e = e.visible()
	}
	return e, e != nil
}

// live reports whether e is a value a reader can see now.
func (e *walEntry) live(nowUnix uint64) bool {
	return !e.deleted && (e.expiresAt == 0 || e.expiresAt > nowUnix)
}

func unixNow() uint64 { return uint64(time.Now().Unix()) }

// Get returns key's item or badger.ErrKeyNotFound.
func (t *Txn) Get(key []byte) (*Item, error) {
	if e, ok := t.lookup(key); ok {
		if !e.live(unixNow()) {
			return nil, badger.ErrKeyNotFound
		}
		return t.item(key, e.val), nil
	}
	t.s.stats.badgerReads.Add(1)
	bi, err := t.badger().Get(key)
	if err != nil {
		return nil, err
	}
	if !t.commit {
		return &Item{key: key, bitem: bi}, nil
	}
	val, err := bi.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	t.s.cache.remember(key, val, bi.ExpiresAt())
	return t.item(key, val), nil
}

func (t *Txn) put(key []byte, val []byte, expiresAt uint64, deleted bool) error {
	// Callers may reuse their buffers once the commit returns; the overlay keeps values
	// until Badger has them.
	return t.PutOwned(key, bytes.Clone(val), expiresAt, deleted)
}

// PutOwned is put for a value nobody else holds (freshly encoded), so not copied.
func (t *Txn) PutOwned(key []byte, val []byte, expiresAt uint64, deleted bool) error {
	if !t.commit {
		return badger.ErrReadOnlyTxn
	}
	// A new entry even for a key written before in this commit: an iterator opened
	// meanwhile holds the earlier one.
	e := t.newEntry()
	e.val, e.expiresAt, e.deleted = val, expiresAt, deleted
	if i := t.find(key); i >= 0 {
		e.key = t.writes[i].key
		t.writes[i] = e
		t.last = i
		return nil
	}
	e.key = t.keyString(key)
	t.writes = append(t.writes, e)
	t.last = len(t.writes) - 1
	switch {
	case t.index != nil:
		t.index[e.key] = len(t.writes) - 1
	case len(t.writes) > indexAfter:
		t.index = make(map[string]int, 2*len(t.writes))
		for i, w := range t.writes {
			t.index[w.key] = i
		}
	}
	return nil
}

// Set writes key = val with no expiry.
func (t *Txn) Set(key, val []byte) error { return t.put(key, val, 0, false) }

// SetEntry writes e's key, value and expiry (badger.NewEntry(...).WithTTL(...)).
func (t *Txn) SetEntry(e *badger.Entry) error { return t.put(e.Key, e.Value, e.ExpiresAt, false) }

// Delete removes key.
func (t *Txn) Delete(key []byte) error { return t.put(key, nil, 0, true) }

// MarkBorn declares that key, just set in this commit, never had a version before: its
// name holds a number never handed out before (a new order's id, a new message's). If
// it is deleted before the applier has written it to Badger, neither the set nor the
// delete reaches Badger, which then keeps no tombstone for the key either; that is
// what keeps prefixes such as the pending-orders index and the outbox free of one
// tombstone per order or message. A key that may have existed must never be marked:
// its delete could then be skipped over a live value in Badger.
func (t *Txn) MarkBorn(key []byte) {
	if i := t.written(key); i >= 0 && !t.writes[i].deleted {
		t.writes[i].born = true
	}
}

// MarkUncached declares that key, just set in this commit, is never read back by Get,
// only by iterators (a ledger line, a log slot, an index entry listed by prefix): once
// Badger has it, it leaves the overlay at once instead of being kept by the cache.
// An order writes several such records (ledger lines, an index entry, its messages'
// log slots); cached, each cost a copy and a slot in the overlay's map, and pushed
// records that are read towards eviction. A Get of a marked key still answers, from
// Badger.
func (t *Txn) MarkUncached(key []byte) {
	if i := t.written(key); i >= 0 {
		t.writes[i].uncached = true
	}
}

// written returns the position of key in writes, or -1, looking first at the key
// written last.
func (t *Txn) written(key []byte) int {
	if t.last < len(t.writes) && t.writes[t.last].key == string(key) {
		return t.last
	}
	return t.find(key)
}

// item is a key and its value, from the overlay or from Badger.
type Item struct {
	key   []byte
	val   []byte
	bitem *badger.Item
}

func (i *Item) Key() []byte { return i.key }

func (i *Item) KeyCopy(dst []byte) []byte { return append(dst[:0], i.key...) }

func (i *Item) Value(fn func([]byte) error) error {
	if i.bitem != nil {
		return i.bitem.Value(fn)
	}
	return fn(i.val)
}

func (i *Item) ValueCopy(dst []byte) ([]byte, error) {
	if i.bitem != nil {
		return i.bitem.ValueCopy(dst)
	}
	return append(dst[:0], i.val...), nil
}

// NewIterator walks Badger and the overlay merged, the overlay winning. Only Prefix,
// Reverse and PrefetchValues of opts are honoured; keys outside Prefix are never seen.
func (t *Txn) NewIterator(opts badger.IteratorOptions) *Iterator {
	prefix := string(opts.Prefix)
	now := unixNow()
	// The overlay is read before Badger's iterator opens, so that an entry leaving the
	// overlay in between is already in Badger.
	seen := map[string]*walEntry{}
	t.s.ovMu.RLock()
	for k, e := range t.s.overlay {
		if strings.HasPrefix(k, prefix) {
			seen[k] = e
		}
	}
	t.s.ovMu.RUnlock()
	if !t.commit {
		for k, e := range seen {
			if e = e.visible(); e != nil {
				seen[k] = e
			} else {
				delete(seen, k) // Badger holds the durable version
			}
		}
	}
	for _, e := range t.writes {
		if strings.HasPrefix(e.key, prefix) {
			seen[e.key] = e
		}
	}
	ov := make([]*walEntry, 0, len(seen))
	for _, e := range seen {
		ov = append(ov, e)
	}
	slices.SortFunc(ov, func(a, b *walEntry) int { return strings.Compare(a.key, b.key) })
	if opts.Reverse {
		slices.Reverse(ov)
	}
	return &Iterator{
		bit:     t.badger().NewIterator(opts),
		ov:      ov,
		reverse: opts.Reverse,
		now:     now,
	}
}

// iterator merges a Badger iterator with a sorted snapshot of overlay entries.
type Iterator struct {
	bit     *badger.Iterator
	ov      []*walEntry
	oi      int
	reverse bool
	now     uint64
	cur     *Item
}

// before reports whether key a comes before b in this iterator's direction.
func (it *Iterator) before(a, b []byte) bool {
	c := bytes.Compare(a, b)
	if it.reverse {
		return c > 0
	}
	return c < 0
}

// settle points cur at the next visible key at or after the cursors.
func (it *Iterator) settle() {
	it.cur = nil
	for {
		var ok *walEntry
		if it.oi < len(it.ov) {
			ok = it.ov[it.oi]
		}
		bvalid := it.bit.Valid()
		switch {
		case ok == nil && !bvalid:
			return
		case ok == nil || (bvalid && it.before(it.bit.Item().Key(), []byte(ok.key))):
			bi := it.bit.Item()
			it.cur = &Item{key: bi.Key(), bitem: bi}
			return
		default:
			if bvalid && bytes.Equal(it.bit.Item().Key(), []byte(ok.key)) {
				it.bit.Next() // the overlay's version supersedes Badger's
			}
			if ok.live(it.now) {
				it.cur = &Item{key: []byte(ok.key), val: ok.val}
				return
			}
			it.oi++
		}
	}
}

func (it *Iterator) Rewind() {
	it.bit.Rewind()
	it.oi = 0
	it.settle()
}

// Seek positions at the first key at or after key (at or before it when reversed).
func (it *Iterator) Seek(key []byte) {
	it.bit.Seek(key)
	it.oi, _ = slices.BinarySearchFunc(it.ov, key, func(e *walEntry, k []byte) int {
		c := strings.Compare(e.key, string(k))
		if it.reverse {
			return -c
		}
		return c
	})
	it.settle()
}

func (it *Iterator) Valid() bool { return it.cur != nil }

func (it *Iterator) ValidForPrefix(prefix []byte) bool {
	return it.cur != nil && bytes.HasPrefix(it.cur.key, prefix)
}

func (it *Iterator) Item() *Item { return it.cur }

func (it *Iterator) Next() {
	if it.cur == nil {
		return
	}
	if it.cur.bitem != nil {
		it.bit.Next()
	} else {
		it.oi++
	}
	it.settle()
}

func (it *Iterator) Close() { it.bit.Close() }
