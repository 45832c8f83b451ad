package kv

import (
	"testing"
	"time"
)

func TestLatencyHistQuantiles(t *testing.T) {
	var h latencyHist
	for range 90 {
		h.observe(20 * time.Microsecond) // first bucket: up to 25µs
	}
	for range 9 {
		h.observe(300 * time.Microsecond) // up to 400µs
	}
	h.observe(10 * time.Second) // beyond every bound
	s := h.snapshot()
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.45, 12500 * time.Nanosecond},           // half-way into the first bucket (0, 25µs]
		{0.9, 25 * time.Microsecond},              // its top
		{0.945, 300 * time.Microsecond},           // half-way into (200µs, 400µs]
		{0.995, LatencyBound(latencyBuckets - 1)}, // beyond every bound: the last bound
	}
	for _, tt := range tests {
		if got := s.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if s.Count() != 100 {
		t.Fatalf("Count = %d, want 100", s.Count())
	}
	before := s
	h.observe(time.Millisecond)
	if d := h.snapshot().Since(before); d.Count() != 1 || d.Quantile(1) != 1600*time.Microsecond || d.Sum != time.Millisecond {
		t.Fatalf("Since = %+v, want the one millisecond observed after", d)
	}
	if (LatencyHist{}).Quantile(0.99) != 0 {
		t.Fatal("an empty histogram has no quantile")
	}
}

// Every acknowledged commit is timed twice: its wait for its turn and its wait to
// be durable; a commit that writes nothing only the first. Every fdatasync is timed.
func TestCommitWaitsAreTimed(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	before := s.LogStats()
	for i := range 10 {
		if err := setKey(s, "timed", string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Update(func(*Txn) error { return nil }); err != nil {
		t.Fatal(err)
	}
	after := s.LogStats()
	if n := after.CommitQueue.Since(before.CommitQueue).Count(); n != 11 {
		t.Errorf("commit queue observations = %d, want 11", n)
	}
	if n, syncs := after.SyncDurations.Since(before.SyncDurations).Count(), after.Syncs-before.Syncs; n != syncs || n == 0 {
		t.Errorf("fdatasync durations observed = %d, want one per sync (%d)", n, syncs)
	}
	d := after.CommitDurable.Since(before.CommitDurable)
	if d.Count() != 10 || d.Sum <= 0 {
		t.Errorf("durable waits = %d (sum %v), want 10 with time in them", d.Count(), d.Sum)
	}
}
