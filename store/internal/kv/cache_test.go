package kv

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func openCache(tb testing.TB, budget int) *DB {
	tb.Helper()
	s, err := Open(Options{Dir: tb.TempDir(), CacheBytes: budget, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func inOverlay(s *DB, key string) *walEntry {
	s.ovMu.RLock()
	defer s.ovMu.RUnlock()
	return s.overlay[key]
}

func commitGet(s *DB, key string) (string, error) { return readKey(s.Update, key) }

// A record read between every batch of never-read writes stays in memory however much
// flows past it, while what is not read again leaves. Each batch alone is twice the
// budget: first in, first out loses the read records in the first batch.
func TestCacheKeepsWhatIsReadAmongColdWrites(t *testing.T) {
	const budget = 64 << 10
	const rounds = 4
	keys := []struct {
		name string
		// read reads the key in a round, or not (nil: never)
		read       func(s *DB, key string) (string, error)
		readRounds int
		wantKept   bool
	}{
		{name: "read by views every round", read: getKey, readRounds: rounds, wantKept: true},
		{name: "read by commits every round", read: commitGet, readRounds: rounds, wantKept: true},
		{name: "read once, then never", read: getKey, readRounds: 1},
		{name: "never read"},
	}
	s := openCache(t, budget)
	for i := range keys {
		if err := setKey(s, fmt.Sprintf("hot:%d", i), fmt.Sprintf("value %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitApplied(t, s)
	reads := s.LogStats().BadgerReads
	cold := bytes.Repeat([]byte("c"), 100)
	perRound := 2 * budget / (len("cold:0:000") + len(cold) + entryOverhead)
	for round := range rounds {
		for i, k := range keys {
			if round >= k.readRounds {
				continue
			}
			key := fmt.Sprintf("hot:%d", i)
			if got, err := k.read(s, key); err != nil || got != fmt.Sprintf("value %d", i) {
				t.Fatalf("round %d: %s: read %q, %v", round, k.name, got, err)
			}
		}
		// One commit, so that the applier admits the whole batch at once.
		err := s.Update(func(txn *Txn) error {
			for j := range perRound {
				if err := txn.Set(fmt.Appendf(nil, "cold:%d:%03d", round, j), cold); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		waitApplied(t, s)
		if n := s.LogStats().BadgerReads - reads; n != 0 {
			t.Fatalf("round %d: %d reads went to Badger; the records read every round should have stayed in memory", round, n)
		}
	}
	for i, k := range keys {
		if kept := inOverlay(s, fmt.Sprintf("hot:%d", i)) != nil; kept != k.wantKept {
			t.Errorf("%s: in memory after %d rounds = %v, want %v", k.name, rounds, kept, k.wantKept)
		}
	}
	if inOverlay(s, "cold:0:000") != nil {
		t.Errorf("the first cold write is still in memory")
	}
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	if s.cache.bytes > budget {
		t.Errorf("cache holds %d bytes, budget %d", s.cache.bytes, budget)
	}
}

// addApplied puts an entry in the overlay as a commit would and returns it, not yet
// admitted. Like a commit's, it is not allocated alone.
func addApplied(s *DB, key string, size int) *walEntry {
	block := make([]walEntry, 2)
	e := &block[0]
	e.key, e.val = key, make([]byte, size)
	e.durable.Store(true)
	s.ovMu.Lock()
	s.overlay[key] = e
	s.ovMu.Unlock()
	return e
}

// checkCache checks the cache's accounting: it counts exactly what is queued, each
// entry once, within the budget and slack.
func checkCache(t *testing.T, s *DB, budget, slack int) {
	t.Helper()
	c := s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := 0
	seen := map[*walEntry]bool{}
	for _, e := range c.queue[c.head:] {
		if seen[e] {
			t.Fatalf("%s is queued twice", e.key)
		}
		seen[e] = true
		sum += entrySize(e)
	}
	if sum != c.bytes {
		t.Fatalf("cache counts %d bytes, its queue holds %d", c.bytes, sum)
	}
	if c.bytes > budget+slack {
		t.Fatalf("cache holds %d bytes, budget %d and %d more allowed", c.bytes, budget, slack)
	}
}

// The budget holds after every admission whatever was read, also while readers keep
// marking every entry during the eviction, and every pass ends. Values a commit
// remembers may exceed it by about 1/rememberWork while the applier is idle.
func TestCacheEvictionRespectsTheBudget(t *testing.T) {
	const budget = 32 << 10
	tests := []struct {
		name string
		// referenced says whether the i-th entry is read before its eviction pass
		referenced func(i int) bool
		// readers keep reading every key meanwhile
		readers bool
		// remember adds entries as values commits read from Badger, of one size
		remember bool
	}{
		{name: "none read", referenced: func(int) bool { return false }},
		{name: "every third read", referenced: func(i int) bool { return i%3 == 0 }},
		{name: "all read", referenced: func(int) bool { return true }},
		{name: "all read, again and again during eviction", referenced: func(int) bool { return true }, readers: true},
		{name: "remembered, none read", referenced: func(int) bool { return false }, remember: true},
		{name: "remembered, all read, again and again", referenced: func(int) bool { return true }, readers: true, remember: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openCache(t, budget)
			rng := rand.New(rand.NewPCG(1, 2))
			const n = 4000
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if tt.readers {
				for r := range 2 {
					wg.Go(func() {
						for i := r; ; i = (i + 7) % n {
							select {
							case <-stop:
								return
							default:
							}
							s.View(func(txn *Txn) error {
								_, err := txn.Get(fmt.Appendf(nil, "k:%04d", i))
								return err
							})
						}
					})
				}
			}
			if tt.remember {
				const size = 100
				entry := len("k:0000") + size + entryOverhead
				slack := (budget/entry/rememberWork + 2) * entry
				for i := range n {
					key := fmt.Sprintf("k:%04d", i)
					s.cache.remember([]byte(key), make([]byte, size), 0)
					if e := inOverlay(s, key); e != nil && tt.referenced(i) {
						e.ref.Store(true)
					}
					checkCache(t, s, budget, slack)
				}
			} else {
				var batch []*walEntry
				for i := range n {
					e := addApplied(s, fmt.Sprintf("k:%04d", i), rng.IntN(400))
					if tt.referenced(i) {
						e.ref.Store(true)
					}
					batch = append(batch, e)
					if len(batch) == 1+rng.IntN(64) {
						s.cache.admit(batch)
						batch = nil
						checkCache(t, s, budget, 0)
					}
				}
				s.cache.admit(batch)
				checkCache(t, s, budget, 0)
			}
			close(stop)
			wg.Wait()
			if got := s.LogStats().Overlay; got*entryOverhead > 2*budget {
				t.Fatalf("overlay holds %d entries, more than the budget can", got)
			}
		})
	}
}

// An entry written again while it waits in the queue leaves the queue when reached,
// read or not, and its key keeps the newer entry; one read and not written again gets
// its second chance as an entry of its own in the overlay, with the same value.
func TestCacheSecondChance(t *testing.T) {
	const budget = 16 << 10
	tests := []struct {
		name       string
		read       bool
		supersede  bool // a newer entry is published (not yet applied)
		wantQueued bool // the old entry, or its copy, is still queued
	}{
		{name: "read, not written again", read: true, wantQueued: true},
		{name: "read, then written again", read: true, supersede: true},
		{name: "not read, written again", supersede: true},
		{name: "not read", wantQueued: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openCache(t, budget)
			e := addApplied(s, "key", 100)
			e.val[0] = 7
			s.cache.admit([]*walEntry{e})
			if tt.read {
				if v, err := getKey(s, "key"); err != nil || v[0] != 7 {
					t.Fatalf("read %q, %v", v, err)
				}
			}
			var newer *walEntry
			if tt.supersede {
				newer = &walEntry{key: "key", val: []byte("newer")}
				publishForTest(s, newer)
			}
			var cold []*walEntry
			for i := range budget / 100 {
				cold = append(cold, addApplied(s, fmt.Sprintf("cold:%d", i), 100))
			}
			s.cache.admit(cold)
			checkCache(t, s, budget, 0)

			cur := inOverlay(s, "key")
			s.cache.mu.Lock()
			queued := slices.Contains(s.cache.queue[s.cache.head:], cur)
			oldQueued := cur != e && slices.Contains(s.cache.queue[s.cache.head:], e)
			s.cache.mu.Unlock()
			if oldQueued {
				t.Fatal("the original entry is still queued")
			}
			switch {
			case tt.supersede:
				if cur != newer {
					t.Fatalf("the overlay holds %p for the key, want the newer entry %p", cur, newer)
				}
				if queued {
					t.Fatal("the newer entry, never admitted, is queued")
				}
			case tt.wantQueued:
				if cur == nil || !queued {
					t.Fatalf("the read entry left: in the overlay %v, queued %v", cur != nil, queued)
				}
				if cur == e || !cur.own || cur.val[0] != 7 || !cur.durable.Load() || cur.ref.Load() {
					t.Fatalf("kept as %+v, want an unmarked durable copy of its own with the same value", cur)
				}
			default:
				if cur != nil {
					t.Fatal("the entry nobody read is still in the overlay")
				}
			}
		})
	}
}

// publishForTest puts a newer, unapplied entry for e's key in the overlay, as publish
// does, without the log.
func publishForTest(s *DB, e *walEntry) {
	s.ovMu.Lock()
	e.prev.Store(s.overlay[e.key])
	s.overlay[e.key] = e
	s.ovMu.Unlock()
}

// A key removed from Badger still reads as removed through its cached tombstone after
// a second chance.
func TestCacheSecondChanceKeepsADelete(t *testing.T) {
	s := openCache(t, 16<<10)
	if err := setKey(s, "gone", "x"); err != nil {
		t.Fatal(err)
	}
	if err := deleteKey(s, "gone"); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, s)
	if _, err := getKey(s, "gone"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("read %v, want not found", err)
	}
	var cold []*walEntry
	for i := range 200 {
		cold = append(cold, addApplied(s, fmt.Sprintf("cold:%d", i), 100))
	}
	s.cache.admit(cold)
	reads := s.LogStats().BadgerReads
	if _, err := getKey(s, "gone"); !errors.Is(err, badger.ErrKeyNotFound) {
		t.Fatalf("read %v, want not found", err)
	}
	if e := inOverlay(s, "gone"); e == nil || !e.deleted {
		t.Fatalf("the tombstone left the overlay: %+v", e)
	}
	if n := s.LogStats().BadgerReads - reads; n != 0 {
		t.Fatalf("%d reads went to Badger", n)
	}
}

// A mixed load as the webhook and the views see it: each operation reads one of a set
// of records read again and again (a user's record, a reader's) and commits a write
// never read again (a seen-marker, a visitor-log slot), which together flow through the
// budget many times. badger-reads/op is what the cache failed to answer.
//
//	go test -run '^$' -bench HotAmongCold -benchtime 400000x ./store/internal/kv
func BenchmarkCacheHotAmongCold(b *testing.B) {
	const (
		hot    = 2000
		budget = 4 << 20
	)
	for _, reader := range []struct {
		name string
		read func(s *DB, key []byte) error
	}{
		{"commit", func(s *DB, key []byte) error {
			return s.Update(func(txn *Txn) error { _, err := txn.Get(key); return err })
		}},
		{"view", func(s *DB, key []byte) error {
			return s.View(func(txn *Txn) error { _, err := txn.Get(key); return err })
		}},
	} {
		b.Run(reader.name, func(b *testing.B) {
			s := openCache(b, budget)
			val := bytes.Repeat([]byte("u"), 200)
			err := s.Update(func(txn *Txn) error {
				for i := range hot {
					if err := txn.Set(fmt.Appendf(nil, "user:%d", i), val); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Settle(b.Context()); err != nil {
				b.Fatal(err)
			}
			marker := make([]byte, 16)
			expires := uint64(time.Now().Add(24 * time.Hour).Unix())
			rng := rand.New(rand.NewPCG(3, 4))
			reads := s.LogStats().BadgerReads
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := reader.read(s, fmt.Appendf(nil, "user:%d", rng.IntN(hot))); err != nil {
					b.Fatal(err)
				}
				err := s.Update(func(txn *Txn) error {
					return txn.SetEntry(&badger.Entry{Key: fmt.Appendf(nil, "seen:%d", i), Value: marker, ExpiresAt: expires})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.LogStats().BadgerReads-reads)/float64(b.N), "badger-reads/op")
		})
	}
}

// The cache's budget bounds the memory it holds, not only what it counts. The
// webhook's shape: every commit rewrites a few large hot values (a user's window, an
// outlog slot) and writes a small key (a seen marker). The cache keeps the small keys;
// each used to keep alive the block of entries it was carved from, with the superseded
// large values in it, and an entry the cache kept kept its newer version's block alive
// the same way: the webhook's heap grew by every reply it wrote. Here the heap grew by
// 15-17 MB for the 256 KiB budget without the copies, 15 MB with them but the link,
// and 0.4 MB now.
func TestCacheHoldsNoMoreMemoryThanItsBudget(t *testing.T) {
	const (
		budget  = 256 << 10
		commits = 1000
		hotKeys = 64
	)
	tests := []struct {
		name string
		// small is the small key commit i writes
		small func(i int) string
	}{
		{"a new small key per commit", func(i int) string { return fmt.Sprintf("cold:%06d", i) }},
		// Each rewrites a key the cache admitted a few batches before.
		{"small keys rewritten while cached", func(i int) string { return fmt.Sprintf("warm:%03d", i%300) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openCache(t, budget)
			waitApplied(t, s)
			heap := func() uint64 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			before := heap()
			big := bytes.Repeat([]byte("h"), 1<<10)
			hot := entryBlock - 1 // per commit, so that each block holds one small key
			for i := range commits {
				err := s.Update(func(txn *Txn) error {
					for j := range hot {
						if err := txn.Set(fmt.Appendf(nil, "hot:%d", (i*hot+j)%hotKeys), big); err != nil {
							return err
						}
					}
					return txn.Set([]byte(tt.small(i)), []byte("seen"))
				})
				if err != nil {
					t.Fatal(err)
				}
				if i%250 == 0 {
					waitApplied(t, s) // many applier batches, as under steady load
				}
			}
			waitApplied(t, s)
			written := commits * hot * len(big)
			grown := int64(heap()) - int64(before)
			t.Logf("wrote %d MB of values; the heap grew by %d KB for a budget of %d KB", written>>20, grown>>10, budget>>10)
			if limit := int64(8 * budget); grown > limit {
				t.Errorf("the heap grew by %d KB after the applier took every commit, more than %d KB (8 times the cache's budget)", grown>>10, limit>>10)
			}
			checkCache(t, s, budget, budget/8)
		})
	}
}

// A record marked uncached leaves the overlay once Badger has it, so that it takes
// nothing from the cache; it is still read by key (from Badger) and listed by prefix.
// The mark belongs to the write, not the key: the same key written again unmarked is
// cached as usual.
func TestUncachedRecordsLeaveTheOverlayOnceApplied(t *testing.T) {
	s := openCache(t, 1<<20)
	err := s.Update(func(txn *Txn) error {
		for _, k := range []string{"ledger:1", "ledger:2"} {
			if err := txn.Set([]byte(k), []byte("line "+k)); err != nil {
				return err
			}
			txn.MarkUncached([]byte(k))
		}
		return txn.Set([]byte("balance:1"), []byte("10"))
	})
	if err != nil {
		t.Fatal(err)
	}
	waitApplied(t, s)
	for _, c := range []struct {
		key    string
		cached bool
	}{{"ledger:1", false}, {"ledger:2", false}, {"balance:1", true}} {
		if got := inOverlay(s, c.key) != nil; got != c.cached {
			t.Errorf("%s in the overlay after it was applied: %v, want %v", c.key, got, c.cached)
		}
	}
	if v, err := readKey(s.View, "ledger:1"); err != nil || v != "line ledger:1" {
		t.Fatalf("View Get ledger:1 = %q, %v", v, err)
	}
	var listed []string
	err = s.View(func(txn *Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte("ledger:")
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			listed = append(listed, string(it.Item().Key()))
		}
		return nil
	})
	if err != nil || !slices.Equal(listed, []string{"ledger:1", "ledger:2"}) {
		t.Fatalf("listing ledger: %q, %v", listed, err)
	}

	if err := setKey(s, "ledger:2", "rewritten"); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, s)
	if e := inOverlay(s, "ledger:2"); e == nil || string(e.val) != "rewritten" {
		t.Fatalf("ledger:2 written again without the mark is not cached: %v", e)
	}
}
