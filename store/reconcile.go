package store

import "encoding/json"

// PutReconcileReport keeps the reconciler's last findings (JSON the engine owns), so
// that operators see them after a restart.
func (s *Store) PutReconcileReport(b []byte) error {
	raw := json.RawMessage(append([]byte(nil), b...))
	return s.update(func(txn *tx) error { return putRecord(txn, []byte(metaReconcileLast), raw, 0) })
}

// ReconcileReport returns the last findings, or ErrNotFound before the first run.
func (s *Store) ReconcileReport() ([]byte, error) {
	var raw json.RawMessage
	err := s.view(func(txn *tx) error { return getRecord(txn, []byte(metaReconcileLast), &raw) })
	return raw, err
}
