package kv

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Commits run one at a time, so that a commit's reads and writes are atomic without
// conflict detection or retries, but there is no committer goroutine: a caller that
// finds no commit running runs its own on its goroutine, and then the commits queued
// meanwhile, until its own answer from the log has come (or the queue is empty); it
// then hands the queue to the caller of the next commit. So an acknowledgement into an
// idle store costs no goroutine hand-off before the log, and under load each caller is
// still woken once, by the log's writer, as it was when a committer ran every commit.
// A plain commit mutex parks a contended caller twice (for the lock, then for the log):
// in the store benchmarks (64 writers, fsync on, a fixed number of operations) it took
// 3-8 % more CPU per order than this and about the committer's, and 1-3 % more per view.
//
// Priority: UpdateNow's commits (acknowledgements) queue apart and run before
// Update's (the actors' background work) that are waiting. A commit that is running is
// never interrupted, and a runner picks the next commit only between two commits, so
// an acknowledgement waits at most for the commit in progress; background commits run
// whenever none waits.

// errTakeOver tells a queued caller that nobody runs the queue now: it runs its own
// commit and goes on with the queue. Never returned to a caller.
var errTakeOver = errors.New("kv: take over the commit queue")

// commitReq is one caller's commit. Requests are pooled with their done channel: the
// channel holds at most one answer, sent once per request (the log's verdict, an error
// before the log, or errTakeOver), and its caller always receives it before the
// request goes back to the pool, so a pooled request never holds an answer. Once a
// request is published (or answered) only its caller may touch it.
type commitReq struct {
	op   func(txn *Txn) error
	done chan error
	// queued is when the caller submitted it; published, when its writes went to the
	// log (zero if none did). The caller reads published after done, which the writer
	// sends after reading the log under the lock publish took.
	queued, published time.Time
}

var reqPool = sync.Pool{New: func() any { return &commitReq{done: make(chan error, 1)} }}

// commitQueue is a FIFO of requests waiting for the runner.
type commitQueue struct {
	reqs []*commitReq
	head int
}

func (q *commitQueue) push(r *commitReq) { q.reqs = append(q.reqs, r) }

func (q *commitQueue) pop() *commitReq {
	if q.head == len(q.reqs) {
		return nil
	}
	r := q.reqs[q.head]
	q.reqs[q.head] = nil
	q.head++
	if q.head == len(q.reqs) {
		q.reqs, q.head = q.reqs[:0], 0
	}
	return r
}

// commits is the DB's commit queue and the one transaction commits run in.
type commits struct {
	mu      sync.Mutex
	running bool // a caller is running commits
	closed  bool
	urgent  commitQueue
	normal  commitQueue
	// runners counts the running caller (0 or 1); shutdown waits for it.
	runners sync.WaitGroup
	// txn is reused by every commit: they run one at a time.
	txn Txn
}

// Update runs fn as one commit and returns once the commit is durable. If fn fails
// nothing it wrote is kept. Commits run one at a time and go from one to the next
// without waiting for durability: the log's writer syncs many commits at once and wakes
// their callers.
func (s *DB) Update(fn func(txn *Txn) error) error { return s.submit(false, fn) }

// UpdateNow is Update for a commit a client is waiting on (an update to acknowledge,
// an order to accept, a view to count): it runs before background commits already
// queued (the actors' processing), so that acknowledgements do not queue behind the
// work they start. Background commits still run whenever no acknowledgement waits.
func (s *DB) UpdateNow(fn func(txn *Txn) error) error { return s.submit(true, fn) }

func (s *DB) submit(urgent bool, fn func(txn *Txn) error) error {
	r := reqPool.Get().(*commitReq)
	r.op, r.queued = fn, time.Now()
	c := &s.commits
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return s.answered(r, ErrClosed)
	case c.running:
		if urgent {
			c.urgent.push(r)
		} else {
			c.normal.push(r)
		}
		c.mu.Unlock()
		if err := <-r.done; err != errTakeOver {
			return s.answered(r, err)
		}
	default:
		c.running = true
		c.runners.Add(1)
		c.mu.Unlock()
	}
	s.runCommits(r)
	return s.answered(r, <-r.done)
}

// answered records the caller's wait for the log and returns r to the pool.
func (s *DB) answered(r *commitReq, err error) error {
	if err == nil && !r.published.IsZero() {
		s.stats.durableWait.observe(time.Since(r.published))
	}
	r.op, r.published = nil, time.Time{}
	reqPool.Put(r)
	return err
}

// runCommits runs own, the caller's commit, then queued ones while own's answer has
// not come; then it hands the queue to the next commit's caller, or stops if none.
func (s *DB) runCommits(own *commitReq) {
	c := &s.commits
	for r := own; ; {
		if err := s.run(r); err != nil {
			r.done <- err
		}
		c.mu.Lock()
		r = c.urgent.pop()
		if r == nil {
			r = c.normal.pop()
		}
		if r == nil {
			c.running = false
			c.mu.Unlock()
			c.runners.Done()
			return
		}
		c.mu.Unlock()
		if len(own.done) > 0 {
			r.done <- errTakeOver
			return
		}
	}
}

// run executes one commit; on success its caller is answered by the log's writer.
func (s *DB) run(r *commitReq) (err error) {
	epoch := s.wal.failures.Load()
	t := &s.commits.txn
	t.s, t.commit = s, true
	published := false
	defer func() {
		// A panicking commit must not take the runner, and every later commit, with it.
		if p := recover(); p != nil {
			err = fmt.Errorf("store: commit panicked: %v", p)
		}
		t.reset(published)
	}()
	s.stats.queueWait.observe(time.Since(r.queued))
	if err := r.op(t); err != nil {
		return err
	}
	if len(t.writes) == 0 {
		s.wal.waitDurable(r.done, epoch)
		return nil
	}
	r.published = time.Now()
	if err := s.publish(t.writes, r.done, epoch); err != nil {
		return err
	}
	published = true
	return nil
}

// stopCommits refuses new commits and waits until the queued ones have run.
func (s *DB) stopCommits() {
	c := &s.commits
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.runners.Wait()
}
