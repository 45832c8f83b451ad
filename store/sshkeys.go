package store

import (
	"strconv"
	"time"
)

// UserSSHKey is the public key a user registered with /sshkey: their servers are
// created with it, so they can log in without the root password.
type UserSSHKey struct {
	UserID      int64     `json:"user_id"` // Telegram user id
	Key         string    `json:"key"`     // one authorized_keys line, normalised
	Fingerprint string    `json:"fingerprint"`
	AddedAt     time.Time `json:"added_at"`
}

// PutSSHKey registers (or replaces) a user's public key.
func (s *Store) PutSSHKey(k UserSSHKey) error {
	k.AddedAt = s.now()
	return s.update(func(txn *tx) error { return putRecord(txn, sshKeyKey(k.UserID), k, 0) })
}

// GetSSHKey reads a user's public key, or ErrNotFound.
func (s *Store) GetSSHKey(user int64) (UserSSHKey, error) {
	var k UserSSHKey
	err := s.view(func(txn *tx) error { return getRecord(txn, sshKeyKey(user), &k) })
	return k, err
}

// DeleteSSHKey forgets a user's public key; a missing one is not an error.
func (s *Store) DeleteSSHKey(user int64) error {
	return s.update(func(txn *tx) error { return txn.Delete(sshKeyKey(user)) })
}

func sshKeyKey(user int64) []byte { return strconv.AppendInt([]byte(prefixSSHKey), user, 10) }
