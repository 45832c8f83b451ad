package kv

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// logCounters are the write-ahead log's running totals, read by LogStats.
type logCounters struct {
	commits, syncs, bytes         atomic.Int64
	failedWrites                  atomic.Int64
	applied, applyBatches, elided atomic.Int64
	badgerReads                   atomic.Int64
	// queueWait is how long a commit waited for its turn to run; durableWait how long
	// its caller then waited for the fdatasync covering it (and to be woken).
	queueWait, durableWait latencyHist
	// syncTime is each fdatasync of the log, for its tail: under CPU load one in ten
	// takes several times the median (the wait for a core once the disk answered).
	syncTime latencyHist
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
	Elided       int64         // deletes that never reached Badger: their key was born and deleted in between
	Overlay      int           // entries in memory in front of Badger: unapplied or cached
	BadgerReads  int64         // Gets the overlay could not answer, which read Badger
	// CommitQueue is the time commits waited for their turn (they run one at a
	// time); CommitDurable the time from a commit's end to its caller hearing it is
	// durable: the wait for the sync that covers it, the sync, and the wake-up.
	CommitQueue, CommitDurable LatencyHist
	// SyncDurations is each fdatasync of the log (SyncTime is their sum).
	SyncDurations LatencyHist
}

// LogStats reads the counters.
func (s *DB) LogStats() LogStats {
	s.ovMu.RLock()
	overlay := len(s.overlay)
	s.ovMu.RUnlock()
	c := &s.stats
	return LogStats{
		Commits: c.commits.Load(), Syncs: c.syncs.Load(), SyncTime: time.Duration(c.syncTime.sum.Load()),
		Bytes: c.bytes.Load(), Applied: c.applied.Load(), ApplyBatches: c.applyBatches.Load(), Elided: c.elided.Load(), Overlay: overlay,
		BadgerReads: c.badgerReads.Load(),
		CommitQueue: c.queueWait.snapshot(), CommitDurable: c.durableWait.snapshot(), SyncDurations: c.syncTime.snapshot(),
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

// latencyBuckets spans 25 µs to about 1.6 s in powers of two.
const (
	latencyBuckets = 17
	latencyFirst   = 25 * time.Microsecond
)

// latencyHist counts durations into power-of-two buckets without locks: it sits on
// every commit's path.
type latencyHist struct {
	counts [latencyBuckets + 1]atomic.Int64 // the last counts what exceeds every bound
	sum    atomic.Int64
}

func (h *latencyHist) observe(d time.Duration) {
	i := 0
	for b := latencyFirst; i < latencyBuckets && d > b; b *= 2 {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

func (h *latencyHist) snapshot() LatencyHist {
	var s LatencyHist
	for i := range h.counts {
		s.Counts[i] = h.counts[i].Load()
	}
	s.Sum = time.Duration(h.sum.Load())
	return s
}

// LatencyHist is a snapshot of a latency histogram: Counts[i] holds the durations up
// to Bound(i) and above the bound before; the last holds everything longer.
type LatencyHist struct {
	Counts [latencyBuckets + 1]int64
	Sum    time.Duration
}

// LatencyBound is the upper bound of bucket i (for i < len(Counts)-1).
func LatencyBound(i int) time.Duration { return latencyFirst << i }

// Count is the number of durations observed.
func (h LatencyHist) Count() int64 {
	var n int64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Since is what was observed after prev was taken.
func (h LatencyHist) Since(prev LatencyHist) LatencyHist {
	for i := range h.Counts {
		h.Counts[i] -= prev.Counts[i]
	}
	h.Sum -= prev.Sum
	return h
}

// Quantile estimates the q-quantile (0 when empty) as Prometheus's histogram_quantile
// does: linearly within the bucket that holds it. Beyond the last bound it answers
// that bound.
func (h LatencyHist) Quantile(q float64) time.Duration {
	total := h.Count()
	if total == 0 {
		return 0
	}
	rank := q * float64(total)
	var seen float64
	for i, c := range h.Counts[:latencyBuckets] {
		if c > 0 && seen+float64(c) >= rank {
			lo := time.Duration(0)
			if i > 0 {
				lo = LatencyBound(i - 1)
			}
			return lo + time.Duration((rank-seen)/float64(c)*float64(LatencyBound(i)-lo))
		}
		seen += float64(c)
	}
	return LatencyBound(latencyBuckets - 1)
}
