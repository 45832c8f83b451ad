package store

import (
	"fmt"
	"testing"
	"time"
)

// One client cycling through more posts than its reader record holds had every view
// counted: each view pushed the oldest slug out of the record, so by the time the
// client came back to it the slug was forgotten and counted again. One address
// could add views without limit to every post of a blog with 65 posts.
func TestDedupHoldsForAClientSweepingManySlugs(t *testing.T) {
	s, clock := blogSetup(t)
	const posts = maxReaderSlugs + 1
	seed := map[string]uint64{}
	for i := range posts {
		seed[fmt.Sprintf("post-%d", i)] = 0
	}
	if _, err := s.SeedViews(seed); err != nil {
		t.Fatal(err)
	}
	counted := map[string]int{}
	for round := range 3 {
		for i := range posts {
			clock.Advance(time.Second)
			slug := fmt.Sprintf("post-%d", i)
			res, err := s.RecordView(Hit{Slug: slug, IP: "198.51.100.23"})
			if err != nil {
				t.Fatalf("round %d, %s: %v", round, slug, err)
			}
			if res.Counted {
				counted[slug]++
			}
		}
	}
	// All of it took 3*65 s, well inside one dedup window.
	for slug, n := range counted {
		if n > 1 {
			t.Errorf("%s was counted %d times inside one dedup window", slug, n)
		}
	}
	totals, err := s.ViewTotals(func() []string {
		var out []string
		for slug := range seed {
			out = append(out, slug)
		}
		return out
	}())
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, n := range totals {
		sum += n
	}
	if sum > posts {
		t.Fatalf("%d views counted for one client over %d posts in one window", sum, posts)
	}
	// Once the window has passed, the client counts again.
	clock.Advance(ViewDedupWindow)
	if res, err := s.RecordView(Hit{Slug: "post-0", IP: "198.51.100.23"}); err != nil || !res.Counted {
		t.Fatalf("after the window: %+v %v", res, err)
	}
}
