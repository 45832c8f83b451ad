package kv

import (
	"testing"
	"time"
)

func entriesN(n int) []*walEntry {
	out := make([]*walEntry, n)
	for i := range out {
		out[i] = &walEntry{key: "k"}
	}
	return out
}

// The writer must never wait for an applier that is busy with Badger, however many
// small syncs it makes meanwhile (it used to after 64), until the queue holds its
// limit in entries.
func TestApplyQueuePushWaitsOnlyAtItsLimit(t *testing.T) {
	q := newApplyQueue(1000)
	for range 999 { // far more batches than the old channel held
		q.push(applyBatch{entries: entriesN(1)})
	}
	q.push(applyBatch{entries: entriesN(1)}) // reaches the limit; still does not wait

	pushed := make(chan struct{})
	go func() {
		q.push(applyBatch{entries: entriesN(1)})
		close(pushed)
	}()
	select {
	case <-pushed:
		t.Fatal("push over the limit did not wait for the applier")
	case <-time.After(50 * time.Millisecond):
	}
	g, done := q.gather(10_000, time.Millisecond)
	entries := g.entries
	if len(entries) < 1000 || done {
		t.Fatalf("gather took %d entries (done %v), want the 1000 queued", len(entries), done)
	}
	select {
	case <-pushed:
	case <-time.After(5 * time.Second):
		t.Fatal("push still waits after the applier took the queue")
	}
}

func TestApplyQueueGather(t *testing.T) {
	tests := []struct {
		name        string
		push        []applyBatch
		close       bool
		max         int
		wantEntries int
		wantClosed  []uint64
		wantDone    bool
	}{
		{"stops at max, whole batches", []applyBatch{{entries: entriesN(3)}, {entries: entriesN(3)}, {entries: entriesN(3)}}, false, 5, 6, nil, false},
		{"segment closes after its entries", []applyBatch{{entries: entriesN(2)}, {closed: 7}, {entries: entriesN(1)}}, false, 100, 3, []uint64{7}, false},
		{"closed and drained", []applyBatch{{entries: entriesN(2)}, {closed: 3}}, true, 100, 2, []uint64{3}, true},
		{"closed, more than max left", []applyBatch{{entries: entriesN(2)}, {entries: entriesN(2)}}, true, 1, 2, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newApplyQueue(1 << 20)
			for _, b := range tt.push {
				q.push(b)
			}
			if tt.close {
				q.close()
			}
			g, done := q.gather(tt.max, 20*time.Millisecond)
			entries, closed := g.entries, g.closed
			if len(entries) != tt.wantEntries || done != tt.wantDone || len(closed) != len(tt.wantClosed) {
				t.Fatalf("gather = %d entries, closed %v, done %v; want %d, %v, %v", len(entries), closed, done, tt.wantEntries, tt.wantClosed, tt.wantDone)
			}
			for i := range closed {
				if closed[i] != tt.wantClosed[i] {
					t.Fatalf("closed = %v, want %v", closed, tt.wantClosed)
				}
			}
		})
	}
}

// gather hands over what arrived within the interval, without waiting for max.
func TestApplyQueueGatherReturnsAfterInterval(t *testing.T) {
	q := newApplyQueue(1 << 20)
	q.push(applyBatch{entries: entriesN(1)})
	got := make(chan int, 1)
	go func() {
		g, _ := q.gather(1_000, 30*time.Millisecond)
		entries := g.entries
		got <- len(entries)
	}()
	time.Sleep(5 * time.Millisecond)
	q.push(applyBatch{entries: entriesN(2)})
	select {
	case n := <-got:
		if n != 3 {
			t.Fatalf("gather took %d entries, want the 3 pushed within its interval", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("gather did not return after its interval")
	}
}
