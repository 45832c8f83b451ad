package store

import (
	"errors"
	"time"
)

// SimServer is a server of the built-in simulated provider. The simulator keeps them
// here so that its names and addresses are never handed out twice and a termination
// deletes only its own server, across restarts.
type SimServer struct {
	Seq       uint64    `json:"seq"` // sim-{Seq}; numbers come from a sequence and are never reused
	Label     string    `json:"label"`
	IPv4      string    `json:"ipv4"`
	Status    string    `json:"status"`
	Region    string    `json:"region"`
	Plan      string    `json:"plan"`
	CreatedAt time.Time `json:"created_at"`
}

// NextSimSeq hands out the next simulated server number.
func (s *Store) NextSimSeq() (uint64, error) { return s.nextSeq("simserver") }

// PutSimServer records a simulated server durably.
func (s *Store) PutSimServer(v SimServer) error {
	if v.Seq == 0 {
		return errors.New("store: a simulated server needs a number")
	}
	return s.update(func(txn *tx) error { return putRecord(txn, simServerKey(v.Seq), &v, 0) })
}

// DeleteSimServer forgets one simulated server; a missing one is not an error.
func (s *Store) DeleteSimServer(seq uint64) error {
	return s.update(func(txn *tx) error { return txn.Delete(simServerKey(seq)) })
}

// SimServers returns every simulated server, oldest first.
func (s *Store) SimServers() ([]SimServer, error) {
	var out []SimServer
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixSimServer, false, func(_, val []byte) (bool, error) {
			var v SimServer
			if err := decodeRecord(val, &v); err != nil {
				return false, err
			}
			out = append(out, v)
			return true, nil
		})
	})
	return out, err
}

func simServerKey(seq uint64) []byte { return u64Key(prefixSimServer, seq) }
