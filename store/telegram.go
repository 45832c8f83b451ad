package store

// TelegramOffset is the getUpdates offset of long polling: the first update_id not
// yet confirmed to Telegram (0 before the first poll).
func (s *Store) TelegramOffset() (int64, error) {
	var v uint64
	err := s.view(func(txn *tx) error {
		var err error
		v, _, err = getU64(txn, []byte(metaTelegramOffset))
		return err
	})
	return int64(v), err
}

// SetTelegramOffset stores the getUpdates offset durably.
func (s *Store) SetTelegramOffset(offset int64) error {
	return s.update(func(txn *tx) error { return putU64(txn, []byte(metaTelegramOffset), uint64(offset), 0) })
}
