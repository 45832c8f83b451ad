package kv

import (
	"sync"
	"time"
)

// applyQueue carries durable commits from the log's writer to the applier. The writer
// must not wait on Badger: with a channel of 64 batches it used to, whenever the
// applier spent longer on one Badger batch than the writer took for 64 syncs, and
// every acknowledgement stalled behind it (a p99 of 25 ms for views without fsync).
// So the queue is bounded by entries, not batches, and set far above what the
// applier takes at once; it only holds the writer back when Badger cannot keep up at
// all, which keeps memory bounded.
type applyQueue struct {
	mu      sync.Mutex
	batches []applyBatch
	entries int
	closed  bool
	kick    chan struct{} // something was pushed, or the queue closed
	space   chan struct{} // the applier took what was queued
	limit   int
}

// applyQueueLimit is how many entries may wait for the applier before the writer does.
const applyQueueLimit = 2 * applyMaxEntries

func newApplyQueue(limit int) *applyQueue {
	return &applyQueue{kick: make(chan struct{}, 1), space: make(chan struct{}, 1), limit: limit}
}

// push queues b for the applier, waiting only while the queue is over its limit.
func (q *applyQueue) push(b applyBatch) {
	q.mu.Lock()
	for q.entries >= q.limit && len(b.entries) > 0 {
		q.mu.Unlock()
		<-q.space
		q.mu.Lock()
	}
	q.batches = append(q.batches, b)
	q.entries += len(b.entries)
	q.mu.Unlock()
	notify(q.kick)
}

// close tells the applier that nothing more comes once the queue is drained.
func (q *applyQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	notify(q.kick)
}

// gathered is what one gather took: the entries, the segments closed after them, the
// newest frame among them and where it ends in the log.
type gathered struct {
	entries []*walEntry
	closed  []uint64
	maxGen  uint64
	end     logPos
}

// gather waits for work, then keeps taking for up to interval or until it holds max
// entries: one Badger batch for many syncs, so that a key written many times meanwhile
// (a slug's total, a user's balance) goes to Badger once. done says the queue is closed
// and drained.
func (q *applyQueue) gather(max int, interval time.Duration) (g gathered, done bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		n := 0
		for n < len(q.batches) && len(g.entries) < max {
			b := q.batches[n]
			g.entries = append(g.entries, b.entries...)
			if b.closed > 0 {
				g.closed = append(g.closed, b.closed)
			}
			if b.end.seg > 0 {
				g.maxGen, g.end = b.gen, b.end
			}
			q.entries -= len(b.entries)
			n++
		}
		q.batches = q.batches[n:]
		if len(q.batches) == 0 {
			q.batches = nil // let the backing array go once drained
		}
		drained := q.closed && len(q.batches) == 0
		q.mu.Unlock()
		if n > 0 {
			notify(q.space)
		}
		switch {
		case drained:
			return g, true
		case len(g.entries) >= max:
			return g, false
		case timer == nil && (len(g.entries) > 0 || len(g.closed) > 0):
			timer = time.NewTimer(interval)
		}
		if timer == nil {
			<-q.kick
			continue
		}
		select {
		case <-q.kick:
		case <-timer.C:
			return g, false
		}
	}
}

// notify wakes whoever waits on c without ever blocking.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
