package store

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// A flood of made-up slugs from one address spends that address's budget of new
// slugs and nothing else: another reader's new post is still counted, the flooder's
// views of existing posts still count, and a refused view stores nothing.
func TestNewSlugBudgetPerClient(t *testing.T) {
	s, clock := blogSetup(t)
	if _, err := s.RecordView(Hit{Slug: "existing", IP: "198.51.100.1"}); err != nil {
		t.Fatal(err)
	}
	flooders := []struct{ name, first, second string }{
		{"IPv4 address", "203.0.113.7", "203.0.113.7"},
		// One subscriber holds a whole /64: fresh addresses in it share one budget.
		{"IPv6 /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff::9"},
	}
	for _, fl := range flooders {
		t.Run(fl.name, func(t *testing.T) {
			for i := range NewSlugsPerClient {
				ip := fl.first
				if i%2 == 1 {
					ip = fl.second
				}
				if res, err := s.RecordView(Hit{Slug: fmt.Sprintf("junk-%s-%d", fl.name, i), IP: ip}); err != nil || !res.Counted {
					t.Fatalf("new slug %d within the budget: %+v, %v", i, res, err)
				}
			}
			before, _ := s.SlugCount()
			visitors, _ := s.VisitorCount()
			_, err := s.RecordView(Hit{Slug: "junk-" + fl.name + "-over", IP: fl.second})
			var le *NewSlugLimitError
			if !errors.As(err, &le) || !errors.Is(err, ErrNewSlugLimit) || le.Budget != NewSlugsPerClient {
				t.Fatalf("new slug past the budget: %v", err)
			}
			// Noon: the budget renews with the salt at midnight.
			if le.RetryAfter != 12*time.Hour {
				t.Fatalf("retry after %v, want 12h", le.RetryAfter)
			}
			if after, _ := s.SlugCount(); after != before {
				t.Fatalf("a refused new slug changed the slug count %d → %d", before, after)
			}
			if v, _ := s.VisitorCount(); v != visitors {
				t.Fatal("a refused view was logged")
			}
			if res, err := s.RecordView(Hit{Slug: "existing", IP: fl.first}); err != nil || !res.Counted {
				t.Fatalf("the flooder's view of an existing post: %+v, %v", res, err)
			}
			if res, err := s.RecordView(Hit{Slug: "new-post-" + fl.name, IP: "198.51.100.2"}); err != nil || !res.Counted || res.Total != 1 {
				t.Fatalf("another reader's new post: %+v, %v", res, err)
			}
		})
	}
	clock.Advance(12 * time.Hour)
	if res, err := s.RecordView(Hit{Slug: "next-day", IP: "203.0.113.7"}); err != nil || !res.Counted {
		t.Fatalf("the budget did not renew the next day: %+v, %v", res, err)
	}
}

// Near the cap each client gets one new slug a day, so the last places go to many
// readers; at the cap new slugs are refused; deleting one frees its place.
func TestSlugCapReserveAndDelete(t *testing.T) {
	s, _ := blogSetup(t)
	old := maxSlugs
	maxSlugs = 40 // the reserve is the last 2
	t.Cleanup(func() { maxSlugs = old })

	seed := map[string]uint64{}
	for i := range 37 {
		seed[fmt.Sprintf("seeded-%02d", i)] = uint64(i)
	}
	if _, err := s.SeedViews(seed); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		slug, ip string
		want     error
	}{
		{"a-1", "192.0.2.1", nil},             // 38: outside the reserve
		{"a-2", "192.0.2.1", ErrNewSlugLimit}, // in the reserve, and 192.0.2.1 had a new slug today
		{"b-1", "192.0.2.2", nil},             // 39
		{"b-2", "192.0.2.2", ErrNewSlugLimit},
		{"c-1", "192.0.2.3", nil}, // 40: the last place
		{"d-1", "192.0.2.4", ErrSlugLimit},
	}
	for _, st := range steps {
		_, err := s.RecordView(Hit{Slug: st.slug, IP: st.ip})
		if !errors.Is(err, st.want) || (st.want == nil) != (err == nil) {
			t.Fatalf("view of %s from %s: %v, want %v", st.slug, st.ip, err, st.want)
		}
	}
	if n, _ := s.SlugCount(); n != 40 {
		t.Fatalf("slug count %d, want 40", n)
	}
	total, err := s.DeleteSlug("seeded-07")
	if err != nil || total != 7 {
		t.Fatalf("DeleteSlug: %d, %v", total, err)
	}
	if n, _ := s.SlugCount(); n != 39 {
		t.Fatalf("slug count after delete %d, want 39", n)
	}
	if totals, _ := s.ViewTotals([]string{"seeded-07"}); totals["seeded-07"] != 0 {
		t.Fatalf("deleted slug still has a total: %v", totals)
	}
	if _, err := s.RecordView(Hit{Slug: "d-1", IP: "192.0.2.4"}); err != nil {
		t.Fatalf("the freed place was not reusable: %v", err)
	}
	if _, err := s.DeleteSlug("seeded-07"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	if _, err := s.DeleteSlug("../x"); !errors.Is(err, ErrInvalidSlug) {
		t.Fatalf("deleting an invalid slug: %v", err)
	}
}

func TestSlugsListing(t *testing.T) {
	s, _ := blogSetup(t)
	if _, err := s.SeedViews(map[string]uint64{"2025/a": 1, "2025/b": 2, "2025/c": 3, "2026/a": 4, "한글": 5}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		prefix, after string
		limit         int
		want          []SlugViews
	}{
		{"", "", 10, []SlugViews{{"2025/a", 1}, {"2025/b", 2}, {"2025/c", 3}, {"2026/a", 4}, {"한글", 5}}},
		{"2025/", "", 2, []SlugViews{{"2025/a", 1}, {"2025/b", 2}}},
		{"2025/", "2025/b", 2, []SlugViews{{"2025/c", 3}}},
		{"", "2025/c", 1, []SlugViews{{"2026/a", 4}}},
		{"2026/", "2025/a", 5, []SlugViews{{"2026/a", 4}}}, // a cursor before the prefix
		{"2025/", "2026/", 5, []SlugViews{}},               // a cursor past it
		{"한", "", 5, []SlugViews{{"한글", 5}}},
		{"nothing", "", 5, []SlugViews{}},
		{"", "", 0, []SlugViews{}},
	}
	for _, c := range cases {
		got, err := s.Slugs(c.prefix, c.after, c.limit)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Slugs(%q, %q, %d) = %v, %v; want %v", c.prefix, c.after, c.limit, got, err, c.want)
		}
	}
}

// Clearing a flood: slugs under a prefix with few views go, in commits of at most
// MaxSlugDeletes, and real posts (more views, or another prefix) stay.
func TestDeleteSlugsClearsAFlood(t *testing.T) {
	s, _ := blogSetup(t)
	seed := map[string]uint64{"junk-real": 50, "post": 1}
	for i := range MaxSlugDeletes + 2 {
		seed[fmt.Sprintf("junk-%04d", i)] = uint64(i % 2)
	}
	if _, err := s.SeedViews(seed); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		deleted int
		more    bool
	}{{MaxSlugDeletes, true}, {2, false}, {0, false}}
	for i, st := range steps {
		deleted, more, err := s.DeleteSlugs("junk-", 1)
		if err != nil || deleted != st.deleted || more != st.more {
			t.Fatalf("call %d: deleted %d, more %v, %v; want %d, %v", i, deleted, more, err, st.deleted, st.more)
		}
	}
	if n, _ := s.SlugCount(); n != 2 {
		t.Fatalf("slug count %d, want 2", n)
	}
	left, err := s.Slugs("", "", 10)
	if err != nil || fmt.Sprint(left) != "[{junk-real 50} {post 1}]" {
		t.Fatalf("left: %v, %v", left, err)
	}
}
