package store

import (
	"maps"
	"slices"
	"testing"
)

// The set of users with a language record is exact across every way a record is
// written (SetUserLanguage, an update's outcome, a change of language) and across a
// reopen; a user outside it is answered without a read.
func TestLanguageSetFollowsWritesAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if err := s.SetUserLanguage(1, UserLanguage{Chosen: "en"}); err != nil {
		t.Fatal(err)
	}
	update := int64(100)
	outcome := func(user int64, l *UserLanguage) {
		t.Helper()
		update++
		if _, err := s.ProcessUpdate(UpdateOutcome{UpdateID: update, UserID: user, Language: l}); err != nil {
			t.Fatal(err)
		}
	}
	outcome(2, &UserLanguage{Client: "ko"})
	outcome(2, &UserLanguage{Chosen: "en", Client: "ko"})
	outcome(3, nil) // seen, no language
	want := map[int64]UserLanguage{1: {Chosen: "en"}, 2: {Chosen: "en", Client: "ko"}, 3: {}, 4: {}}
	check := func(s *Store) {
		t.Helper()
		for u, w := range want {
			if l, err := s.GetUserLanguage(u); err != nil || l != w {
				t.Errorf("user %d: %+v, %v; want %+v", u, l, err, w)
			}
		}
		users := slices.Sorted(maps.Keys(s.languages.users))
		if !slices.Equal(users, []int64{1, 2}) {
			t.Errorf("the set holds %v, want the users with a record [1 2]", users)
		}
	}
	check(s)

	// A record written behind the set's back is not read: GetUserLanguage does not
	// look for users outside it. The reopen finds it.
	if err := s.update(func(txn *tx) error { return putRecord(txn, languageKey(5), &UserLanguage{Client: "en"}, 0) }); err != nil {
		t.Fatal(err)
	}
	if l, err := s.GetUserLanguage(5); err != nil || l != (UserLanguage{}) {
		t.Fatalf("user 5 outside the set was read: %+v, %v", l, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	defer s.Close()
	want[5] = UserLanguage{Client: "en"}
	users := slices.Sorted(maps.Keys(s.languages.users))
	if !slices.Equal(users, []int64{1, 2, 5}) {
		t.Errorf("after the reopen the set holds %v, want [1 2 5]", users)
	}
	for u, w := range want {
		if l, err := s.GetUserLanguage(u); err != nil || l != w {
			t.Errorf("after the reopen, user %d: %+v, %v; want %+v", u, l, err, w)
		}
	}
}
