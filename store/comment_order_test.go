package store

import (
	"slices"
	"testing"
)

// A client that polls a post's comments with ?after=<the last id it saw> sees every
// comment once it is stored, so ids follow the order comments are stored in. Taken
// before the commit, a comment whose hash finished first but whose commit came second
// (here: held between the two) got the lower id, and the poll that had already passed
// it never showed it.
func TestCommentIDsFollowTheOrderTheyAreStored(t *testing.T) {
	s, _ := blogSetup(t)
	held, release := make(chan struct{}), make(chan struct{})
	first := true
	beforeCommentCommit = func() {
		if first {
			first = false
			close(held)
			<-release
		}
	}
	t.Cleanup(func() { beforeCommentCommit = nil })
	slow := make(chan Comment, 1)
	go func() {
		c, err := s.AddComment(NewComment{Slug: "p", Name: "slow", Content: "hashed first, stored second", Password: "pppp"})
		if err != nil {
			t.Error(err)
		}
		slow <- c
	}()
	<-held
	fast, err := s.AddComment(NewComment{Slug: "p", Name: "fast", Content: "stored first", Password: "pppp"})
	if err != nil {
		t.Fatal(err)
	}
	// The poller reads the page now and remembers its last id.
	page, _, err := s.CommentsPage("p", 0, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := page[len(page)-1].ID
	close(release)
	late := <-slow
	next, _, err := s.CommentsPage("p", seen, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(next, func(c Comment) bool { return c.ID == late.ID }) {
		t.Errorf("comment %d, stored after comment %d, is not in the page after %d: %v", late.ID, fast.ID, seen, next)
	}
}
