package kv

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// snappyWithBlockCache is how releases before this one opened Badger: compressed
// tables, and a block cache of Badger's default size holding decompressed copies.
func snappyWithBlockCache(o badger.Options) badger.Options {
	return o.WithCompression(options.Snappy).WithBlockCacheSize(256 << 20)
}

// fillTables writes n records of size bytes (random, so that compression cannot hide
// them) and closes the store, which leaves them all in Badger's tables.
func fillTables(t *testing.T, dir string, n, size int, tune func(badger.Options) badger.Options) map[string][]byte {
	t.Helper()
	s, err := Open(Options{Dir: dir, Logger: slog.New(slog.DiscardHandler), badgerOptions: tune})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	want := make(map[string][]byte, n)
	for i := 0; i < n; i += 1000 {
		err := s.Update(func(txn *Txn) error {
			for j := i; j < min(i+1000, n); j++ {
				val := make([]byte, size)
				for k := range val {
					val[k] = byte(rng.Uint32())
				}
				key := fmt.Sprintf("rec:%08d", j)
				want[key] = val
				if err := txn.Set([]byte(key), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Reads that reach Badger's tables leave nothing behind on the heap: a store read
// through once after a restart holds about what it held before. With compressed tables
// and Badger's default block cache, the decompressed blocks stayed on the heap, up to
// 256 MiB, which is serve's whole default memory limit.
func TestReadingBadgerLeavesNoCopiesOnTheHeap(t *testing.T) {
	const n, size = 40_000, 700 // 28 MB of values, under the value-log threshold
	dir := t.TempDir()
	fillTables(t, dir, n, size, nil)
	s, err := Open(Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := liveHeap()
	for i := range n {
		if _, err := readKey(s.View, fmt.Sprintf("rec:%08d", i)); err != nil {
			t.Fatal(err)
		}
	}
	after := liveHeap()
	if grew := int64(after) - int64(before); grew > 8<<20 {
		t.Fatalf("reading %d records once grew the live heap by %d MB, want under 8 MB", n, grew>>20)
	}
}

// A store whose tables an earlier release wrote compressed opens and reads them all,
// takes new writes, and reads those too.
func TestTablesWrittenCompressedStayReadable(t *testing.T) {
	const n, size = 5_000, 300
	dir := t.TempDir()
	want := fillTables(t, dir, n, size, snappyWithBlockCache)
	s, err := Open(Options{Dir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := setKey(s, "rec:new", "written uncompressed"); err != nil {
		t.Fatal(err)
	}
	want["rec:new"] = []byte("written uncompressed")
	for key, val := range want {
		got, err := readKey(s.View, key)
		if err != nil || got != string(val) {
			t.Fatalf("%s: %d bytes, %v; want the %d written", key, len(got), err, len(val))
		}
	}
}
