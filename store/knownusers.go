package store

import (
	"sync"

	"github.com/dgraph-io/ristretto/v2/z"
)

// knownUsers rules out Telegram users of whom nothing is stored: no record of them
// (tguser:) and no rate-limit window (ratelimit:). A user's first update read both and
// found neither, two Badger searches for keys that are nowhere, made for a third of
// the updates of the anchors' webhook load (10,000 users, three updates each, on a
// fresh store). Every user is added inside the commit that writes either record,
// before that commit can be followed by another, so any later commit or view that
// asks finds them; those stored before Open are loaded once. A false positive, or a
// filter fuller than planned, only costs the read that was made before.
type knownUsers struct {
	mu     sync.Mutex
	loaded bool
	b      *z.Bloom
}

// knownUsersPlanned sizes the filter (1.2 MiB at 1 % false positives) unless more
// users are stored at Open.
const knownUsersPlanned = 1 << 20

func (k *knownUsers) add(user int64) {
	k.mu.Lock()
	if k.b == nil {
		k.b = z.NewBloomFilter(knownUsersPlanned, 0.01)
	}
	k.b.Add(idHash(user))
	k.mu.Unlock()
}

// mayBeKnown is false when nothing is stored of user.
func (k *knownUsers) mayBeKnown(user int64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.loaded || k.b != nil && k.b.Has(idHash(user))
}

// loadKnownUsers fills the filter with the users of the records and windows stored at
// Open. Until it has run, nobody is ruled out.
func (s *Store) loadKnownUsers() error {
	var users []int64
	err := s.view(func(txn *tx) error {
		if err := scanKeys(txn, prefixTelegramUser, func(key []byte) {
			users = append(users, int64(u64FromKey(prefixTelegramUser, key)))
		}); err != nil {
			return err
		}
		return scanKeys(txn, prefixRateLimit, func(key []byte) {
			if id, err := parseIntSuffix(key, prefixRateLimit); err == nil {
				users = append(users, id)
			}
		})
	})
	if err != nil {
		return err
	}
	b := z.NewBloomFilter(float64(max(2*len(users), knownUsersPlanned)), 0.01)
	for _, u := range users {
		b.Add(idHash(u))
	}
	k := &s.known
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.b == nil {
		k.b = b
	} else { // added meanwhile (Open runs alone, so nothing does today)
		for _, u := range users {
			k.b.Add(idHash(u))
		}
	}
	k.loaded = true
	return nil
}
