package store

import (
	"testing"
	"time"
)

// The clock set back (an NTP step, an operator fixing a fast clock) left the times
// stored in the future: a write window opened before the step ran for the step's
// length more, and a view counted before it kept its slug out of the count as long.

func TestBlogWriteWindowAfterTheClockStepsBack(t *testing.T) {
	s, clock := blogSetup(t)
	const ip = "203.0.113.44"
	for i := range BlogWriteLimit {
		if ok, _, err := s.AllowBlogWrite(ip); err != nil || !ok {
			t.Fatalf("write %d: %v %v", i, ok, err)
		}
	}
	clock.Advance(-time.Hour)
	ok, retry, err := s.AllowBlogWrite(ip)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatal("the clock stepping back gave a used window new writes")
	}
	if retry > BlogWriteWindow {
		t.Fatalf("Retry-After %v after the clock stepped back; a window is %v", retry, BlogWriteWindow)
	}
	clock.Advance(BlogWriteWindow)
	if ok, retry, err := s.AllowBlogWrite(ip); err != nil || !ok {
		t.Fatalf("one window after the step: ok=%v retry=%v err=%v", ok, retry, err)
	}
}

func TestViewDedupAfterTheClockStepsBack(t *testing.T) {
	s, clock := blogSetup(t)
	hit := Hit{Slug: "post", IP: "203.0.113.45"}
	steps := []struct {
		name        string
		advance     time.Duration
		wantCounted bool
	}{
		{"first view", 0, true},
		{"just after the clock stepped back an hour", -time.Hour, false},
		{"a window after the step", ViewDedupWindow + time.Second, true},
		{"a reload", time.Minute, false},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		res, err := s.RecordView(hit)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.Counted != st.wantCounted {
			t.Fatalf("%s: counted=%v, want %v", st.name, res.Counted, st.wantCounted)
		}
	}
}
