package main

import (
	"fmt"
	"runtime/metrics"
	"time"
)

// schedSample is the runtime's histogram of how long goroutines waited, runnable,
// for a P before they ran (/sched/latencies:seconds), read at one moment. Every hop
// on the way to an acknowledgement (the handler woken by the log's writer, the
// commit queue's runner, an actor's inbox) pays this wait, so it is what the p99 of
// a loaded two-core machine is made of, next to the fdatasync.
type schedSample struct {
	counts  []uint64
	buckets []float64
}

func readSched() schedSample {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedSample{}
	}
	h := s[0].Value.Float64Histogram()
	return schedSample{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// quantiles returns the waits between before and s at the quantiles qs, each the
// upper bound of the bucket it falls in (the runtime's buckets are about 12 % wide);
// nil if nothing was counted.
func (s schedSample) quantiles(before schedSample, qs ...float64) []time.Duration {
	diff := make([]uint64, len(s.counts))
	var total uint64
	for i, c := range s.counts {
		if i < len(before.counts) {
			c -= before.counts[i]
		}
		diff[i] = c
		total += c
	}
	if total == 0 {
		return nil
	}
	out := make([]time.Duration, len(qs))
	for j, q := range qs {
		want, seen := uint64(q*float64(total)), uint64(0)
		for i, c := range diff {
			if seen += c; seen > want {
				out[j] = time.Duration(min(s.buckets[i+1], float64(time.Hour)/float64(time.Second)) * float64(time.Second))
				break
			}
		}
	}
	return out
}

// printSched prints how long goroutines waited for a P between two readings. In the
// in-process scenarios the load generator's goroutines share the scheduler and are
// counted too.
func printSched(before, after schedSample) {
	q := after.quantiles(before, 0.5, 0.9, 0.99, 0.999)
	if q == nil {
		return
	}
	fmt.Printf("  %-24s %9s   p50 %s p90 %s p99 %s p99.9 %s runnable before running (runtime/metrics /sched/latencies, load generator included)\n",
		"scheduler waits", "", fmtDur(q[0]), fmtDur(q[1]), fmtDur(q[2]), fmtDur(q[3]))
}
