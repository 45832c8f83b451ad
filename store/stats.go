package store

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// logCounters are the write-ahead log's running totals, read by LogStats.
type logCounters struct {
	commits, syncs, syncNanos, bytes atomic.Int64
	applied, applyBatches            atomic.Int64
}

// LogStats is what the write path has done since Open: how many commits the log took
// and how many fdatasyncs they shared, what reached Badger behind it, and what the
// overlay holds now. /metrics exports it; `make bench` prints it.
type LogStats struct {
	Commits      int64         // commits appended to the log
	Syncs        int64         // fdatasyncs (each covers every commit appended meanwhile)
	SyncTime     time.Duration // time spent in them
	Bytes        int64         // bytes written to the log
	Applied      int64         // entries written to Badger (a key's repeats in a batch count once)
	ApplyBatches int64         // applier batches
	Overlay      int           // entries in memory in front of Badger: unapplied or cached
}

// LogStats reads the counters.
func (s *Store) LogStats() LogStats {
	s.ovMu.RLock()
	overlay := len(s.overlay)
	s.ovMu.RUnlock()
	c := &s.stats
	return LogStats{
		Commits: c.commits.Load(), Syncs: c.syncs.Load(), SyncTime: time.Duration(c.syncNanos.Load()),
		Bytes: c.bytes.Load(), Applied: c.applied.Load(), ApplyBatches: c.applyBatches.Load(), Overlay: overlay,
	}
}

// TuneProcs gives the Go scheduler one processor more than it would use by default,
// unless GOMAXPROCS is set in the environment, and returns the number in effect.
//
// Why: the log writer spends most of its time inside fdatasync, and a goroutine in a
// system call keeps its processor until the runtime notices and hands it over. On two
// cores that left the request handlers one processor for much of the time: measured
// with `make bench`, POST /api/views ran about 12,000/s with the default of 2 and
// 15,000–20,000/s with 3 (CPU used rose from 66 % to 78 %).
// Calling it again changes nothing.
func TuneProcs() int {
	tuneOnce.Do(func() {
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
		}
	})
	return runtime.GOMAXPROCS(0)
}

var tuneOnce sync.Once
