package store

import (
	"errors"
	"testing"
	"time"
)

// TestMarkInquiryRead: the read mark is kept across a restart, marking twice is
// harmless, and an inquiry that is not kept is ErrNotFound.
func TestMarkInquiryRead(t *testing.T) {
	dir := t.TempDir()
	clock := &blogClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	s := blogOpen(t, dir, clock)
	a, err := s.AddInquiry(Inquiry{Name: "a", Email: "a@example.com", Message: "first"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.AddInquiry(Inquiry{Name: "b", Email: "b@example.com", Message: "second"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		id      uint64
		wantErr error
	}{
		{"unread", a.ID, nil},
		{"already read", a.ID, nil},
		{"never sent", b.ID + 100, ErrNotFound},
	}
	for _, tt := range tests {
		got, err := s.MarkInquiryRead(tt.id)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
		}
		if err == nil && (!got.Read || got.ID != tt.id || got.Message != "first") {
			t.Fatalf("%s: answered %+v", tt.name, got)
		}
	}
	s.Close()
	s = blogOpen(t, dir, clock)
	defer s.Close()
	list, err := s.Inquiries(10, 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("inquiries after restart = %+v, %v", list, err)
	}
	if list[0].ID != b.ID || list[0].Read || list[1].ID != a.ID || !list[1].Read {
		t.Fatalf("read marks after restart: %+v", list)
	}
}
