package kv

import (
	"encoding/binary"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// seqLeaseSize is how many numbers a sequence takes per durable write. A crash skips
// at most this many; a clean Close writes the unused rest back.
const seqLeaseSize = 1000

// seqLease is a sequence's numbers in hand: next up to (not including) limit. The
// stored value is the first number not handed out, as Badger's own sequences store it,
// so databases written before the write-ahead log keep counting.
type seqLease struct{ next, limit uint64 }

// NextSeq returns the next number of the monotonic sequence stored at key. Zero is
// never returned, so that a zero id always means "unset".
func (s *DB) NextSeq(key string) (uint64, error) {
	name := key
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	q, err := s.lease(name)
	if err != nil {
		return 0, err
	}
	if q.next >= q.limit {
		if err := s.storeSeq(name, q.next+seqLeaseSize); err != nil {
			return 0, err
		}
		q.limit = q.next + seqLeaseSize
	}
	n := q.next
	q.next++
	return n, nil
}

// lease is the sequence's numbers in hand, read from the store the first time; the
// caller holds seqMu.
func (s *DB) lease(name string) (*seqLease, error) {
	if s.seqs == nil {
		return nil, ErrClosed // written back (releaseSeqs)
	}
	if q := s.seqs[name]; q != nil {
		return q, nil
	}
	var stored uint64
	err := s.View(func(txn *Txn) error {
		item, err := txn.Get([]byte(name))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("store: sequence %q is %d bytes, not 8", name, len(v))
			}
			stored = binary.BigEndian.Uint64(v)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	q := &seqLease{next: max(stored, 1), limit: stored}
	s.seqs[name] = q
	return q, nil
}

// SeqPast makes the sequence at key hand out only numbers above n from now on: ids
// that something outside the store already uses (a provider's servers named after
// orders a restore lost).
//
// It moves at most maxJump numbers ahead: a number further off is refused (an error),
// since it is more likely a stranger's than a gap, and would use up the sequence.
func (s *DB) SeqPast(key string, n, maxJump uint64) (advanced bool, err error) {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	q, err := s.lease(key)
	if err != nil {
		return false, err
	}
	if q.next > n {
		return false, nil
	}
	if n-q.next >= maxJump {
		return false, fmt.Errorf("store: sequence %q is at %d; refusing to move it past %d, more than %d ahead", key, q.next, n, maxJump)
	}
	if err := s.storeSeq(key, n+1+seqLeaseSize); err != nil {
		return false, err
	}
	q.next, q.limit = n+1, n+1+seqLeaseSize
	return true, nil
}

// storeSeq records v durably. It does not queue behind commits, so a commit may call nextSeq.
func (s *DB) storeSeq(name string, v uint64) error {
	val := binary.BigEndian.AppendUint64(nil, v)
	key := name
	done := make(chan error, 1)
	if err := s.publish([]*walEntry{{key: key, val: val}}, done, s.wal.failures.Load()); err != nil {
		return err
	}
	return <-done
}

// releaseSeqs writes each sequence's unused numbers back, so a restart continues where
// this run stopped. It runs once no commit can run any more (shutdown), and hands out
// no number after it: one would be handed out again after the restart.
func (s *DB) releaseSeqs() {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	for name, q := range s.seqs {
		if q.next < q.limit {
			if err := s.storeSeq(name, q.next); err != nil {
				s.log.Warn("store: release sequence", "name", name, "err", err)
			}
		}
	}
	s.seqs = nil
}
