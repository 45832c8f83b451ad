package store

import (
	"errors"
	"testing"
)

// Every comment, edit and delete runs PBKDF2 (100,000 rounds, tens of milliseconds of
// a core). The per-address write limit counts an IPv6 /64 as one client, but a /48
// holds 65,536 of them: with nothing bounding the hashing process-wide, one such
// holder kept every core busy and starved the webhook and the orders. Now the hashes
// run a few at a time with a bounded queue, and past it a write is refused at once.
func TestPasswordWorkIsBounded(t *testing.T) {
	s, _ := blogSetup(t)
	c, err := s.AddComment(NewComment{Slug: "p", Name: "n", Content: "c", Password: "pppp"})
	if err != nil {
		t.Fatal(err)
	}
	// Take every place the gate has, running and waiting.
	held := 0
	for passwordGate.tryEnter() {
		held++
	}
	if held == 0 || held > 1024 {
		t.Fatalf("the gate holds %d places", held)
	}
	if _, err := s.AddComment(NewComment{Slug: "p", Name: "n", Content: "c", Password: "pppp"}); !errors.Is(err, ErrPasswordBusy) {
		t.Fatalf("a new comment with the gate full: %v, want ErrPasswordBusy", err)
	}
	if _, err := s.EditComment("p", c.ID, "pppp", "edited"); !errors.Is(err, ErrPasswordBusy) {
		t.Fatalf("an edit with the gate full: %v, want ErrPasswordBusy", err)
	}
	if err := s.DeleteComment("p", c.ID, "pppp"); !errors.Is(err, ErrPasswordBusy) {
		t.Fatalf("a delete with the gate full: %v, want ErrPasswordBusy", err)
	}
	for range held {
		passwordGate.leave()
	}
	if _, err := s.EditComment("p", c.ID, "pppp", "edited"); err != nil {
		t.Fatalf("an edit once the gate has room: %v", err)
	}
	if n, _ := s.countPrefix(prefixComment); n != 1 {
		t.Fatalf("%d comments stored, want 1", n)
	}
}
