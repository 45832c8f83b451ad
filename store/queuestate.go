package store

import (
	"errors"
	"time"
)

// QueuePause is whether an operator has paused provisioning. It is one record, so
// that a pause outlives a restart: a daemon restarted during a provider outage must
// not start spending everyone's retries again.
type QueuePause struct {
	Paused bool      `json:"paused"`
	Since  time.Time `json:"since"`
	// By names who paused or resumed it last (the audit log's actor), for the log line.
	By string `json:"by,omitempty"`
}

// QueuePause reads the pause record; the zero value (running) when none was ever set.
func (s *Store) QueuePause() (QueuePause, error) {
	var p QueuePause
	err := s.view(func(txn *tx) error { return getRecord(txn, []byte(metaQueuePause), &p) })
	if errors.Is(err, ErrNotFound) {
		return QueuePause{}, nil
	}
	return p, err
}

// SetQueuePause records p; it is durable when this returns.
func (s *Store) SetQueuePause(p QueuePause) error {
	p.Since = p.Since.UTC()
	return s.updateNow(func(txn *tx) error { return putRecord(txn, []byte(metaQueuePause), &p, 0) })
}
