package store

import (
	"strconv"
	"sync"
)

// userSet is a set of user ids kept beside records keyed by user (SSH keys,
// languages), so that a user without a record is answered without a read. Each set's
// owner says when a user joins and leaves; the rule is that the set may hold users
// without a record, never the reverse.
type userSet struct {
	mu    sync.RWMutex
	users map[int64]struct{}
}

func (u *userSet) add(user int64) {
	u.mu.Lock()
	if u.users == nil {
		u.users = map[int64]struct{}{}
	}
	u.users[user] = struct{}{}
	u.mu.Unlock()
}

func (u *userSet) remove(user int64) {
	u.mu.Lock()
	delete(u.users, user)
	u.mu.Unlock()
}

func (u *userSet) has(user int64) bool {
	u.mu.RLock()
	_, ok := u.users[user]
	u.mu.RUnlock()
	return ok
}

// loadUserSet fills set with the users of the records under prefix (prefix + user id).
func (s *Store) loadUserSet(set *userSet, prefix string) error {
	return s.view(func(txn *tx) error {
		return scanKeys(txn, prefix, func(key []byte) {
			if user, err := strconv.ParseInt(string(key[len(prefix):]), 10, 64); err == nil {
				set.add(user)
			}
		})
	})
}
