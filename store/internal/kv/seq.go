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
	q := s.seqs[name]
	if q == nil {
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
			return 0, err
		}
		q = &seqLease{next: stored, limit: stored}
		s.seqs[name] = q
	}
	if q.next == 0 {
		q.next = 1
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
// this run stopped.
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
}
