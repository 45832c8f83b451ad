package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// queuedCommits is how many commits wait for the one running.
func queuedCommits(s *DB) int {
	s.commits.mu.Lock()
	defer s.commits.mu.Unlock()
	q := func(q *commitQueue) int { return len(q.reqs) - q.head }
	return q(&s.commits.urgent) + q(&s.commits.normal)
}

// holdCommits runs a commit (writing key, if not empty) that blocks until release is
// called, and returns once it runs: commits submitted meanwhile queue behind it.
func holdCommits(t *testing.T, s *DB, key string) (release func(), done <-chan error) {
	t.Helper()
	block, started, res := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		res <- s.Update(func(txn *Txn) error {
			close(started)
			<-block
			if key == "" {
				return nil
			}
			return txn.Set([]byte(key), []byte("ok"))
		})
	}()
	<-started
	var once sync.Once
	return func() { once.Do(func() { close(block) }) }, res
}

func waitQueued(t *testing.T, s *DB, n int) {
	t.Helper()
	for queuedCommits(s) < n {
		time.Sleep(time.Millisecond)
	}
}

// A commit that panics is answered with an error and leaves no trace, whether it runs
// on its caller's goroutine or on another caller's that runs the queue, and the
// commits after it run.
func TestPanickingCommitIsRefusedAndLaterCommitsRun(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	panicky := func(key string) func(*Txn) error {
		return func(txn *Txn) error {
			if err := txn.Set([]byte(key), []byte("half")); err != nil {
				return err
			}
			panic("boom " + key)
		}
	}
	// Alone: it runs on the caller's goroutine.
	if err := s.Update(panicky("p:alone")); err == nil || !strings.Contains(err.Error(), "boom p:alone") {
		t.Fatalf("a panicking commit returned %v", err)
	}
	// Queued: it runs on the goroutine of the commit that holds the queue, which goes on
	// running queued commits while the sync its own commit waits for is held back.
	syncGate := make(chan struct{})
	var openGate sync.Once
	gate := func() { openGate.Do(func() { close(syncGate) }) }
	defer gate()
	hold := func() { <-syncGate }
	s.wal.beforeSync.Store(&hold)
	release, held := holdCommits(t, s, "p:held")
	defer release()
	queuedErr, afterErr := make(chan error, 1), make(chan error, 1)
	go func() { queuedErr <- s.UpdateNow(panicky("p:queued")) }()
	waitQueued(t, s, 1)
	go func() { afterErr <- setKey(s, "p:after", "ok") }()
	waitQueued(t, s, 2)
	release()
	if err := <-queuedErr; err == nil || !strings.Contains(err.Error(), "boom p:queued") {
		t.Fatalf("a queued panicking commit returned %v", err)
	}
	for queuedCommits(s) > 0 {
		time.Sleep(time.Millisecond)
	}
	s.wal.beforeSync.Store(nil)
	gate()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-afterErr; err != nil {
		t.Fatal(err)
	}
	if err := setKey(s, "p:last", "ok"); err != nil {
		t.Fatalf("a commit after the panics: %v", err)
	}
	for _, k := range []string{"p:alone", "p:queued"} {
		if _, err := getKey(s, k); !errors.Is(err, badger.ErrKeyNotFound) {
			t.Errorf("%s written by a panicking commit: %v", k, err)
		}
	}
	for _, k := range []string{"p:held", "p:after", "p:last"} {
		if v, err := getKey(s, k); err != nil || v != "ok" {
			t.Errorf("%s = %q, %v", k, v, err)
		}
	}
}

// Commits from many goroutines, urgent and background mixed, run one at a time: a
// read-modify-write counter ends exact.
func TestConcurrentCommitsAreSerial(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	const writers, each = 64, 25
	incr := func(txn *Txn) error {
		var n uint64
		if it, err := txn.Get([]byte("counter")); err == nil {
			v, _ := it.ValueCopy(nil)
			n = binary.BigEndian.Uint64(v)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return txn.Set([]byte("counter"), binary.BigEndian.AppendUint64(nil, n+1))
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				update := s.Update
				if (w+i)%2 == 0 {
					update = s.UpdateNow
				}
				if err := update(incr); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	v, err := getKey(s, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.BigEndian.Uint64([]byte(v)); n != writers*each {
		t.Fatalf("counter = %d after %d increments", n, writers*each)
	}
}

// A commit that writes many keys, some several times, keeps the last write of each,
// sees it in its own reads and iteration, and MarkBorn finds keys past the first few.
func TestLargeWriteSetLastWriteWins(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	const keys = 3 * indexAfter
	want := map[string]string{}
	err := s.Update(func(txn *Txn) error {
		for round := range 3 {
			for i := range keys {
				k, v := fmt.Sprintf("big:%03d", i), fmt.Sprintf("v%d-%d", round, i)
				var err error
				switch {
				case round == 2 && i%5 == 0:
					err, v = txn.Delete([]byte(k)), ""
				case round == 1 || i%3 == 0:
					err = txn.Set([]byte(k), []byte(v))
				default:
					continue
				}
				if err != nil {
					return err
				}
				want[k] = v
			}
		}
		for k, v := range want {
			it, err := txn.Get([]byte(k))
			if v == "" {
				if !errors.Is(err, badger.ErrKeyNotFound) {
					return fmt.Errorf("deleted %s read back: %v", k, err)
				}
				continue
			}
			if err != nil {
				return err
			}
			if got, _ := it.ValueCopy(nil); string(got) != v {
				return fmt.Errorf("%s reads %q in its commit, want %q", k, got, v)
			}
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("big:")})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			got, _ := it.Item().ValueCopy(nil)
			if k := string(it.Item().Key()); want[k] != string(got) {
				return fmt.Errorf("iteration shows %s = %q, want %q", k, got, want[k])
			}
			n++
		}
		if live := keys - (keys+4)/5; n != live {
			return fmt.Errorf("iteration saw %d keys, want %d", n, live)
		}
		born := fmt.Sprintf("big:%03d", keys-1)
		txn.MarkBorn([]byte(born))
		if i := txn.find([]byte(born)); i < 0 || !txn.writes[i].born {
			return fmt.Errorf("MarkBorn(%s) did not find the key", born)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		got, err := getKey(s, k)
		if v == "" {
			if !errors.Is(err, badger.ErrKeyNotFound) {
				t.Errorf("deleted %s read back: %q, %v", k, got, err)
			}
			continue
		}
		if err != nil || got != v {
			t.Errorf("%s = %q, %v; want %q", k, got, err, v)
		}
	}
}

// Requests and their done channels are reused. Every caller hears its own commit's
// answer and never one left over from an earlier use: commits of every kind (writing,
// read-only, failing, panicking) from many goroutines, while the log fails now and
// then, each get the answer their own commit earned, and what was acknowledged is
// exactly what is kept. (Under -race it also caught the log's frames sharing their
// buffer with new commits after a failed write: TestFramesAfterAFailedWriteReplay.)
func TestEveryCallerHearsItsOwnAnswer(t *testing.T) {
	f := newFaultSwitch(syscall.EIO, false)
	s := openFaulty(t, t.TempDir(), f)
	defer s.Close()
	const writers, each = 32, 60
	type outcome struct {
		key string
		err error
	}
	results := make(chan outcome, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("w%d:%d", w, i)
				own := fmt.Errorf("refused %s", key)
				update := s.Update
				if rand.IntN(2) == 0 {
					update = s.UpdateNow
				}
				switch rand.IntN(5) {
				case 0: // refused by the commit itself
					if err := update(func(*Txn) error { return own }); err != own {
						t.Errorf("%s: a failing commit was answered %v", key, err)
					}
				case 1:
					err := update(func(*Txn) error { panic(key) })
					if err == nil || !strings.HasSuffix(err.Error(), " "+key) {
						t.Errorf("%s: a panicking commit was answered %v", key, err)
					}
				case 2: // read-only: nil, or the log's error
					err := update(func(txn *Txn) error {
						_, err := txn.Get([]byte(key))
						if errors.Is(err, badger.ErrKeyNotFound) {
							return nil
						}
						return err
					})
					if err != nil && !errors.Is(err, ErrLogUnavailable) {
						t.Errorf("%s: a read-only commit was answered %v", key, err)
					}
				default:
					if rand.IntN(16) == 0 {
						f.arm("sync")
					}
					err := setKey(s, key, key)
					if err != nil && !errors.Is(err, ErrLogUnavailable) {
						t.Errorf("%s: a write was answered %v", key, err)
					}
					results <- outcome{key, err}
				}
			}
		})
	}
	wg.Wait()
	close(results)
	f.arm("")
	var outcomes []outcome
	failed := 0
	for r := range results {
		outcomes = append(outcomes, r)
		if r.err != nil {
			failed++
		}
	}
	if f.hits.Load() > 0 && failed == 0 {
		t.Errorf("the log failed %d times and no write was refused", f.hits.Load())
	}
	for _, r := range outcomes {
		got, err := getKey(s, r.key)
		switch {
		case r.err == nil && (err != nil || got != r.key):
			t.Errorf("%s was acknowledged but reads %q, %v", r.key, got, err)
		case r.err != nil && !errors.Is(err, badger.ErrKeyNotFound):
			t.Errorf("%s was refused (%v) but reads %q, %v", r.key, r.err, got, err)
		}
	}
}

// Close lets the commits queued before it run and answers them; commits after it are
// refused with ErrClosed.
func TestCloseDrainsQueuedCommits(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	release, held := holdCommits(t, s, "")
	defer release()
	const queued = 8
	errs := make(chan error, queued)
	for i := range queued {
		go func() { errs <- setKey(s, fmt.Sprintf("q:%d", i), "v") }()
	}
	waitQueued(t, s, queued)
	closed := closeBegun(s)
	if err := setKey(s, "q:late", "v"); !errors.Is(err, ErrClosed) {
		t.Fatalf("a commit after Close began: %v, want ErrClosed", err)
	}
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for range queued {
		if err := <-errs; err != nil {
			t.Errorf("a commit queued before Close: %v", err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := setKey(s, "q:closed", "v"); !errors.Is(err, ErrClosed) {
		t.Fatalf("a commit after Close: %v, want ErrClosed", err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	for i := range queued {
		if v, err := getKey(s, fmt.Sprintf("q:%d", i)); err != nil || v != "v" {
			t.Errorf("q:%d after a restart: %q, %v", i, v, err)
		}
	}
}

// After a failed write the log takes writes again in a fresh segment, and what it
// writes from then on replays exactly. The writer's frame buffer and the one commits
// append to used to be the same array after a failure, so frames written under load
// could carry other commits' bytes (a race under -race, damage or wrong values at
// replay without it).
func TestFramesAfterAFailedWriteReplay(t *testing.T) {
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := newFaultSwitch(syscall.EIO, false)
	// Badger refuses the applier, so the log is what the next start reads.
	full := func() error { return errors.New("no space left on device (injected)") }
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: quiet, logFault: f.fault, applyFault: full})
	if err != nil {
		t.Fatal(err)
	}
	// Two large frames leave both of the writer's buffers roomy enough that what
	// follows never outgrows them (a buffer that grows moves to a new array).
	for i := range 2 {
		if err := setKey(s, fmt.Sprint("big:", i), strings.Repeat("b", 1<<18)); err != nil {
			t.Fatal(err)
		}
	}
	f.arm("sync")
	if err := setKey(s, "fail:0", "x"); !errors.Is(err, ErrLogUnavailable) {
		t.Fatalf("a commit whose sync failed: %v", err)
	}
	for setKey(s, "fail:1", "x") != nil { // until the log has recovered
		time.Sleep(time.Millisecond)
	}
	const writers, each = 16, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				k := fmt.Sprintf("after:%02d:%02d", w, i)
				if err := setKey(s, k, strings.Repeat(k, 4)); err != nil {
					t.Errorf("%s: %v", k, err)
				}
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	for w := range writers {
		for i := range each {
			k := fmt.Sprintf("after:%02d:%02d", w, i)
			if v, err := getKey(s, k); err != nil || v != strings.Repeat(k, 4) {
				t.Fatalf("after replay %s = %.40q, %v", k, v, err)
			}
		}
	}
}

// SeqPast moves a sequence past a number in use outside the store, durably: the next
// number, and the first after a restart, is above it; a number already passed moves
// nothing.
func TestSeqPastHoldsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if n, _ := s.NextSeq("seq:t"); n != 1 {
		t.Fatalf("first number %d", n)
	}
	if moved, err := s.SeqPast("seq:t", 5000, 1<<20); err != nil || !moved {
		t.Fatalf("SeqPast(5000): %v, %v", moved, err)
	}
	if moved, _ := s.SeqPast("seq:t", 10, 1<<20); moved {
		t.Fatal("SeqPast(10) moved a sequence already past it")
	}
	if moved, err := s.SeqPast("seq:t", 1<<62, 1<<20); moved || err == nil {
		t.Fatal("SeqPast moved a sequence 2^62 ahead")
	}
	if n, _ := s.NextSeq("seq:t"); n != 5001 {
		t.Fatalf("next after SeqPast(5000): %d", n)
	}
	s.Close()
	s = quietOpen(t, dir)
	defer s.Close()
	if n, _ := s.NextSeq("seq:t"); n <= 5001 {
		t.Fatalf("next after a restart: %d, want above 5001", n)
	}
}

// closeBegun starts s.Close on its own goroutine and returns once Close refuses new
// commits; the channel hears what Close returned.
func closeBegun(s *DB) <-chan error {
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for {
		s.commits.mu.Lock()
		c := s.commits.closed
		s.commits.mu.Unlock()
		if c {
			return closed
		}
		time.Sleep(time.Millisecond)
	}
}
