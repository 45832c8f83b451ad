package store

import (
	"errors"
	"testing"
)

// GetSSHKey answers a user with no key from memory; the set of users with keys must
// follow every put and delete and survive a reopen, or a user's key would be skipped.
func TestSSHKeySetFollowsPutsDeletesAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if _, err := s.GetSSHKey(1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no key yet: %v", err)
	}
	for _, u := range []int64{1, 2, 30} {
		if err := s.PutSSHKey(UserSSHKey{UserID: u, Key: "ssh-ed25519 AAAA" + string(rune('a'+u%26))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSSHKey(2); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		for _, u := range []int64{1, 30} {
			if k, err := s.GetSSHKey(u); err != nil || k.UserID != u {
				t.Fatalf("user %d: %+v %v", u, k, err)
			}
		}
		for _, u := range []int64{2, 3} {
			if _, err := s.GetSSHKey(u); !errors.Is(err, ErrNotFound) {
				t.Fatalf("user %d has no key: %v", u, err)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	check(s)
}
