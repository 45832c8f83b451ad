package store

import (
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// groupCommitter folds the writes of many concurrent callers into one transaction and
// one durable commit, so that an fsync is paid per batch rather than per caller. Each
// caller still gets its own error: an op that fails is dropped from the batch and the
// rest are committed without it.
type groupCommitter struct {
	s        *Store
	reqs     chan *groupReq
	maxBatch int
	done     chan struct{}
}

type groupReq struct {
	op   func(txn *badger.Txn) error
	done chan error
}

func newGroupCommitter(s *Store, maxBatch int) *groupCommitter {
	g := &groupCommitter{s: s, reqs: make(chan *groupReq, maxBatch), maxBatch: maxBatch, done: make(chan struct{})}
	go g.loop()
	return g
}

// do runs op inside the next group transaction and returns once it is durable.
// op may run more than once (on conflict), so it must only read and write through txn.
func (g *groupCommitter) do(op func(txn *badger.Txn) error) (err error) {
	r := &groupReq{op: op, done: make(chan error, 1)}
	defer func() {
		if recover() != nil { // reqs closed by stop
			err = ErrClosed
		}
	}()
	g.reqs <- r
	return <-r.done
}

func (g *groupCommitter) stop() {
	close(g.reqs)
	<-g.done
}

func (g *groupCommitter) loop() {
	defer close(g.done)
	batch := make([]*groupReq, 0, g.maxBatch)
	for r := range g.reqs {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < g.maxBatch {
			select {
			case r, ok := <-g.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		g.commit(batch)
	}
}

// commit runs the batch, dropping failed ops and splitting batches that grow too big.
func (g *groupCommitter) commit(batch []*groupReq) {
	for len(batch) > 0 {
		var failed int = -1
		var failErr error
		err := g.s.update(func(txn *badger.Txn) error {
			failed = -1
			for i, r := range batch {
				if err := r.op(txn); err != nil {
					failed, failErr = i, err
					return errOpFailed
				}
			}
			return nil
		})
		switch {
		case err == nil:
			for _, r := range batch {
				r.done <- nil
			}
			return
		case errors.Is(err, errOpFailed):
			batch[failed].done <- failErr
			batch = append(batch[:failed], batch[failed+1:]...)
		case errors.Is(err, badger.ErrTxnTooBig) && len(batch) > 1:
			half := len(batch) / 2
			g.commit(batch[:half])
			batch = batch[half:]
		default:
			for _, r := range batch {
				r.done <- fmt.Errorf("store: group commit: %w", err)
			}
			return
		}
	}
}

var errOpFailed = errors.New("store: op failed")
