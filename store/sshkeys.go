package store

import (
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

// Store.sshKeys is the users that may have a key stored: every user whose key record
// exists is in it (it is loaded from the records at Open, and a user joins it before
// their key's commit and leaves it only after their removal's commit is durable), so
// a user not in it has no key and GetSSHKey answers without a read. Most users never
// register one, and every server created asks.

// PutSSHKey registers (or replaces) a user's public key.
func (s *Store) PutSSHKey(k UserSSHKey) error {
	k.AddedAt = s.now()
	s.sshKeys.add(k.UserID) // before the commit: the set may hold users without a key, never the reverse
	return s.update(func(txn *tx) error { return putRecord(txn, sshKeyKey(k.UserID), k, 0) })
}

// GetSSHKey reads a user's public key, or ErrNotFound.
func (s *Store) GetSSHKey(user int64) (UserSSHKey, error) {
	if !s.sshKeys.has(user) {
		return UserSSHKey{}, ErrNotFound
	}
	var k UserSSHKey
	err := s.view(func(txn *tx) error { return getRecord(txn, sshKeyKey(user), &k) })
	return k, err
}

// DeleteSSHKey forgets a user's public key; a missing one is not an error.
func (s *Store) DeleteSSHKey(user int64) error {
	if err := s.update(func(txn *tx) error { return txn.Delete(sshKeyKey(user)) }); err != nil {
		return err
	}
	s.sshKeys.remove(user)
	return nil
}

func sshKeyKey(user int64) []byte { return intKey(prefixSSHKey, user) }
