package store

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// blogClock is a settable clock for the store's Options.Now.
type blogClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *blogClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *blogClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *blogClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

func blogOpen(t *testing.T, dir string, clock *blogClock) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock.Now})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

// blogSetup opens a store in a temp dir on a fake clock set to noon UTC.
func blogSetup(t *testing.T) (*Store, *blogClock) {
	t.Helper()
	clock := &blogClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	s := blogOpen(t, t.TempDir(), clock)
	t.Cleanup(func() { s.Close() })
	return s, clock
}

func TestRecordViewDedupWindow(t *testing.T) {
	s, clock := blogSetup(t)
	steps := []struct {
		name        string
		advance     time.Duration
		ip          string
		slug        string
		wantCounted bool
		wantTotal   uint64
	}{
		{"first view counts", 0, "203.0.113.7", "hello", true, 1},
		{"same ip a minute later", time.Minute, "203.0.113.7", "hello", false, 1},
		{"same ip just inside the window", 28*time.Minute + 59*time.Second, "203.0.113.7", "hello", false, 1},
		{"other ip counts", 0, "198.51.100.1", "hello", true, 2},
		{"same ip other slug counts", 0, "203.0.113.7", "other", true, 1},
		{"same ip once the window has passed", time.Minute, "203.0.113.7", "hello", true, 3},
		{"the window restarts from the counted view", 29 * time.Minute, "203.0.113.7", "hello", false, 3},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		res, err := s.RecordView(Hit{Slug: st.slug, IP: st.ip})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.Counted != st.wantCounted || res.Total != st.wantTotal {
			t.Fatalf("%s: got counted=%v total=%d, want counted=%v total=%d", st.name, res.Counted, res.Total, st.wantCounted, st.wantTotal)
		}
	}
	totals, err := s.ViewTotals([]string{"hello", "other", "never-seen"})
	if err != nil {
		t.Fatal(err)
	}
	if totals["hello"] != 3 || totals["other"] != 1 || totals["never-seen"] != 0 {
		t.Fatalf("totals = %v", totals)
	}
}

// Just after midnight the day's salt is new, yet a view from 23:50 must still dedup.
func TestRecordViewDedupAcrossMidnight(t *testing.T) {
	s, clock := blogSetup(t)
	clock.Set(time.Date(2026, 11, 29, 23, 50, 0, 0, time.UTC))
	if res, err := s.RecordView(Hit{Slug: "post", IP: "192.0.2.1"}); err != nil || !res.Counted {
		t.Fatalf("first view: %+v %v", res, err)
	}
	clock.Advance(15 * time.Minute)
	if res, err := s.RecordView(Hit{Slug: "post", IP: "192.0.2.1"}); err != nil || res.Counted {
		t.Fatalf("view 15 minutes later, past midnight: %+v %v", res, err)
	}
	clock.Advance(16 * time.Minute)
	if res, err := s.RecordView(Hit{Slug: "post", IP: "192.0.2.1"}); err != nil || !res.Counted {
		t.Fatalf("view 31 minutes later: %+v %v", res, err)
	}
	st, err := s.BlogStats(10, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []DayStats{{"2026-11-29", 1, 1}, {"2026-11-30", 1, 1}}
	if fmt.Sprint(st.Daily) != fmt.Sprint(want) {
		t.Fatalf("daily = %v, want %v", st.Daily, want)
	}
}

func TestBlogStats(t *testing.T) {
	s, clock := blogSetup(t)
	hit := func(slug, ip string) {
		t.Helper()
		if _, err := s.RecordView(Hit{Slug: slug, IP: ip, Country: "KR", City: "Seoul", Lat: 37.5, Lon: 127}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(-24 * time.Hour)
	hit("a", "1.1.1.1")
	clock.Advance(24 * time.Hour)
	hit("a", "1.1.1.1")
	hit("a", "1.1.1.2")
	hit("b", "1.1.1.2")
	hit("b", "1.1.1.2") // deduped, still a visitor hit
	st, err := s.BlogStats(1, 30, 100)
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalViews != 4 || st.TodayViews != 3 || st.TodayUniqueVisitors != 2 {
		t.Fatalf("totals: %+v", st)
	}
	if len(st.TopSlugs) != 1 || st.TopSlugs[0] != (SlugViews{"a", 3}) {
		t.Fatalf("top slugs: %+v", st.TopSlugs)
	}
	if len(st.Daily) != 30 || st.Daily[29].Day != "2026-11-29" || st.Daily[28] != (DayStats{"2026-11-28", 1, 1}) || st.Daily[0].Day != "2026-10-31" {
		t.Fatalf("daily: first %+v, last two %+v", st.Daily[0], st.Daily[28:])
	}
	if len(st.RecentVisitors) != 5 || st.RecentVisitors[0].Slug != "b" || st.RecentVisitors[4].TS.Day() != 28 || st.RecentVisitors[0].City != "Seoul" {
		t.Fatalf("recent visitors: %+v", st.RecentVisitors)
	}
}

func TestValidateSlug(t *testing.T) {
	long := make([]byte, MaxSlugLen+1)
	for i := range long {
		long[i] = 'a'
	}
	cases := []struct {
		slug string
		ok   bool
	}{
		{"hello-world", true},
		{"2026/11/my_post.html", true},
		{string(long[:MaxSlugLen]), true},
		{"Upper", true},
		{"sp ace", true},
		{"한글", true},
		{"a..b", true},
		{"pct%2e%2e", true},
		{"", false},
		{string(long), false},
		{"../etc/passwd", false},
		{"a/../b", false},
		{"/leading", false},
		{"trailing/", false},
		{"a//b", false},
		{"./a", false},
		{"nul\x00", false},
		{"rtl\u202eoverride", false},
		{"a\\b", false},
		{"\u1112\u1161\u11ab", false}, // 한 decomposed: the store takes only the NFC form
	}
	for _, c := range cases {
		err := ValidateSlug(c.slug)
		if (err == nil) != c.ok {
			t.Errorf("ValidateSlug(%q) = %v, want ok=%v", c.slug, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidSlug) {
			t.Errorf("ValidateSlug(%q) error %v is not ErrInvalidSlug", c.slug, err)
		}
	}
}

func TestInvalidSlugStoresNothing(t *testing.T) {
	s, _ := blogSetup(t)
	if _, err := s.RecordView(Hit{Slug: "../x", IP: "1.2.3.4"}); !errors.Is(err, ErrInvalidSlug) {
		t.Fatalf("RecordView: %v", err)
	}
	if n, _ := s.VisitorCount(); n != 0 {
		t.Fatalf("visitor log has %d entries after a refused hit", n)
	}
	if n, _ := s.countPrefix(prefixViews); n != 0 {
		t.Fatalf("%d slug totals after a refused hit", n)
	}
}

// hammer runs fn(i) for i in [0, n) on a few goroutines and fails on the first error.
func hammer(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func TestVisitorLogKeepsNewest3000(t *testing.T) {
	s, _ := blogSetup(t)
	const extra = 150
	hammer(t, VisitorCap+extra, func(i int) error {
		_, err := s.RecordView(Hit{Slug: "p", IP: fmt.Sprintf("10.0.%d.%d", i/256, i%256)})
		return err
	})
	// One more, alone, so that "newest" is well defined.
	if _, err := s.RecordView(Hit{Slug: "last", IP: "10.9.9.9"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.VisitorCount()
	if err != nil {
		t.Fatal(err)
	}
	if n != VisitorCap {
		t.Fatalf("visitor log has %d entries, want %d", n, VisitorCap)
	}
	recent, err := s.RecentVisitors(1)
	if err != nil || len(recent) != 1 || recent[0].Slug != "last" || recent[0].IP != "10.9.9.9" {
		t.Fatalf("newest visitor = %+v, %v", recent, err)
	}
	st, err := s.BlogStats(10, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.TodayUniqueVisitors != VisitorCap+extra+1 || st.TotalViews != VisitorCap+extra+1 {
		t.Fatalf("stats after the cap: %+v", st)
	}
}

func TestInquiriesKeepNewest5000(t *testing.T) {
	s, _ := blogSetup(t)
	const extra = 130
	hammer(t, InquiryCap+extra, func(i int) error {
		_, err := s.AddInquiry(Inquiry{Name: "n", Email: "a@example.com", Message: fmt.Sprint(i)})
		return err
	})
	last, err := s.AddInquiry(Inquiry{Name: "last", Email: "z@example.com", Message: "bye"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.InquiryCount()
	if err != nil || n != InquiryCap {
		t.Fatalf("inquiries kept = %d (%v), want %d", n, err, InquiryCap)
	}
	page, err := s.Inquiries(2, 0)
	if err != nil || len(page) != 2 || page[0].ID != last.ID || page[0].Name != "last" {
		t.Fatalf("newest inquiries = %+v, %v", page, err)
	}
	older, err := s.Inquiries(1, page[1].ID)
	if err != nil || len(older) != 1 || older[0].ID >= page[1].ID {
		t.Fatalf("page before %d = %+v, %v", page[1].ID, older, err)
	}
}

// The inquiry cap holds when sequence numbers are skipped: a crash leaves a lease's
// numbers unused (up to a thousand), a failed commit one, and the entries capacity
// below them were never deleted (5,759 kept under a cap of 5,000), before and after a
// restart. The log keeps the newest InquiryCap numbers, so after a skip it holds that
// many fewer until the skipped numbers leave the window.
func TestInquiryCapHoldsAcrossSkippedNumbers(t *testing.T) {
	dir := t.TempDir()
	clock := &blogClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	s := blogOpen(t, dir, clock)
	add := func(s *Store, n int) {
		t.Helper()
		for range n {
			if _, err := s.AddInquiry(Inquiry{Name: "n", Email: "a@example.com", Message: "m"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(s *Store, when string, kept int) {
		t.Helper()
		n, err := s.InquiryCount()
		if err != nil || n > InquiryCap {
			t.Fatalf("%s: inquiries kept = %d (%v), over the cap of %d", when, n, err, InquiryCap)
		}
		if n != kept {
			t.Fatalf("%s: inquiries kept = %d, want %d", when, n, kept)
		}
	}
	add(s, InquiryCap)
	for range 999 { // what a crash does to a lease
		if _, err := s.nextSeq("inquiry"); err != nil {
			t.Fatal(err)
		}
	}
	add(s, InquiryCap)
	want(s, "after 999 numbers skipped, then the cap's worth", InquiryCap)
	for range 300 {
		s.nextSeq("inquiry")
	}
	s.Close()
	s = blogOpen(t, dir, clock)
	add(s, 1)
	want(s, "after a restart and 300 more skipped", InquiryCap-300)
}

func TestSeedViewsOnceAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	clock := &blogClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	seed := map[string]uint64{"hello": 120, "2025/old-post": 7}

	s := blogOpen(t, dir, clock)
	applied, err := s.SeedViews(seed)
	if err != nil || !applied {
		t.Fatalf("first seed: applied=%v err=%v", applied, err)
	}
	if res, err := s.RecordView(Hit{Slug: "hello", IP: "1.1.1.1"}); err != nil || res.Total != 121 {
		t.Fatalf("view after seed: %+v %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = blogOpen(t, dir, clock)
	defer s.Close()
	applied, err = s.SeedViews(map[string]uint64{"hello": 999, "new": 5})
	if err != nil || applied {
		t.Fatalf("second start: applied=%v err=%v, want not applied", applied, err)
	}
	done, err := s.MetaFlag("views_seeded")
	if err != nil || !done {
		t.Fatalf("meta flag views_seeded = %v, %v", done, err)
	}
	totals, err := s.ViewTotals([]string{"hello", "2025/old-post", "new"})
	if err != nil {
		t.Fatal(err)
	}
	if totals["hello"] != 121 || totals["2025/old-post"] != 7 || totals["new"] != 0 {
		t.Fatalf("totals after second start = %v", totals)
	}
}

func TestSeedViewsRejectsBadSlugWholesale(t *testing.T) {
	s, _ := blogSetup(t)
	if _, err := s.SeedViews(map[string]uint64{"good": 1, "../bad": 2}); !errors.Is(err, ErrInvalidSlug) {
		t.Fatalf("seed with a bad slug: %v", err)
	}
	if done, _ := s.MetaFlag("views_seeded"); done {
		t.Fatal("a refused seed was recorded as done")
	}
	if totals, _ := s.ViewTotals([]string{"good"}); totals["good"] != 0 {
		t.Fatalf("a refused seed wrote totals: %v", totals)
	}
}

func TestCommentPasswords(t *testing.T) {
	s, clock := blogSetup(t)
	c, err := s.AddComment(NewComment{Slug: "post", Name: "kim", Content: "first", Password: "hunter22", IP: "1.2.3.4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EditComment("post", c.ID, "wrong-pass", "hacked"); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("edit with a wrong password: %v", err)
	}
	if _, err := s.EditComment("other-post", c.ID, "hunter22", "moved"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("edit through another slug: %v", err)
	}
	clock.Advance(time.Hour)
	edited, err := s.EditComment("post", c.ID, "hunter22", "second")
	if err != nil {
		t.Fatal(err)
	}
	if edited.Content != "second" || edited.EditedAt == nil || !edited.EditedAt.Equal(clock.Now()) {
		t.Fatalf("edited = %+v", edited)
	}
	list, err := s.Comments("post", 100)
	if err != nil || len(list) != 1 || list[0].Content != "second" || list[0].EditedAt == nil {
		t.Fatalf("comments = %+v, %v", list, err)
	}
	if err := s.DeleteComment("post", c.ID, "nope"); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("delete with a wrong password: %v", err)
	}
	if err := s.DeleteComment("post", c.ID, "hunter22"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.Comments("post", 100); len(list) != 0 {
		t.Fatalf("comments after delete = %+v", list)
	}
	if err := s.AdminDeleteComment(c.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("admin delete of a deleted comment: %v", err)
	}
}

func TestPasswordHashFormat(t *testing.T) {
	h, err := hashPassword("pw-1234")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := hashPassword("pw-1234")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	if want := fmt.Sprintf("%s$%d$", passwordScheme, PasswordIterations); h[:len(want)] != want {
		t.Fatalf("hash %q does not start with %q", h, want)
	}
	if !verifyPassword(h, "pw-1234") || verifyPassword(h, "pw-1235") || verifyPassword("garbage", "pw-1234") {
		t.Fatal("verifyPassword gives wrong answers")
	}
}

func TestAllowBlogWrite(t *testing.T) {
	s, clock := blogSetup(t)
	for i := 0; i < BlogWriteLimit; i++ {
		if ok, _, err := s.AllowBlogWrite("1.2.3.4"); err != nil || !ok {
			t.Fatalf("write %d refused: %v", i+1, err)
		}
	}
	ok, retry, err := s.AllowBlogWrite("1.2.3.4")
	if err != nil || ok || retry <= 0 || retry > BlogWriteWindow {
		t.Fatalf("write past the limit: ok=%v retry=%v err=%v", ok, retry, err)
	}
	if ok, _, _ := s.AllowBlogWrite("5.6.7.8"); !ok {
		t.Fatal("another IP was refused")
	}
	clock.Advance(BlogWriteWindow)
	if ok, _, _ := s.AllowBlogWrite("1.2.3.4"); !ok {
		t.Fatal("write after the window refused")
	}
}

// The write window counts a client as the slug budget does, an IPv6 /64 as one
// (one subscriber's addresses wrote without limit), and does not restart at midnight
// UTC, when the salt of its key changes (ten writes went through in three seconds).
func TestBlogWriteWindowCannotBeSidestepped(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ip       func(i int) string
		midnight bool
	}{
		{"addresses of one IPv6 /64", func(i int) string { return fmt.Sprintf("2001:db8:1:2::%x", i+1) }, false},
		{"across midnight", func(int) string { return "203.0.113.5" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clock := blogSetup(t)
			if tc.midnight {
				clock.Set(clock.Now().Truncate(24 * time.Hour).Add(24*time.Hour - 2*time.Second))
			}
			allowed := 0
			for i := range 2 * BlogWriteLimit {
				if tc.midnight && i == BlogWriteLimit {
					clock.Advance(3 * time.Second)
				}
				ok, _, err := s.AllowBlogWrite(tc.ip(i))
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					allowed++
				}
			}
			if allowed != BlogWriteLimit {
				t.Fatalf("%d writes allowed within a window, want %d", allowed, BlogWriteLimit)
			}
			if ok, _, _ := s.AllowBlogWrite("2001:db8:1:3::1"); !ok {
				t.Error("another /64 was refused")
			}
		})
	}
}

// A client sweeping many slugs keeps one bounded reader record: once it holds
// maxReaderSlugs views inside the window, further slugs are not counted until its
// oldest view leaves the window, and nothing grows.
func TestReaderRecordIsBounded(t *testing.T) {
	s, clock := blogSetup(t)
	// The slugs exist already: one client may only create NewSlugsPerClient a day.
	seed := map[string]uint64{}
	for i := 0; i <= maxReaderSlugs; i++ {
		seed[fmt.Sprintf("p%d", i)] = 0
	}
	if _, err := s.SeedViews(seed); err != nil {
		t.Fatal(err)
	}
	first := clock.Now().Add(time.Second)
	for i := 0; i < maxReaderSlugs; i++ {
		clock.Advance(time.Second)
		if res, err := s.RecordView(Hit{Slug: fmt.Sprintf("p%d", i), IP: "192.0.2.9"}); err != nil || !res.Counted {
			t.Fatalf("view %d: %+v %v", i, res, err)
		}
	}
	last := fmt.Sprintf("p%d", maxReaderSlugs)
	if res, _ := s.RecordView(Hit{Slug: last, IP: "192.0.2.9"}); res.Counted {
		t.Fatal("a slug past maxReaderSlugs was counted while the record is full")
	}
	if res, _ := s.RecordView(Hit{Slug: "p0", IP: "192.0.2.9"}); res.Counted {
		t.Fatal("the oldest slug was counted twice inside the window")
	}
	clock.Set(first.Add(ViewDedupWindow))
	if res, _ := s.RecordView(Hit{Slug: last, IP: "192.0.2.9"}); !res.Counted {
		t.Fatal("the record's oldest view left the window and another slug is still refused")
	}
	r := reader{}
	for i := 0; i < 3*maxReaderSlugs; i++ {
		r = r.with(fmt.Sprintf("s%d", i), clock.Now())
	}
	if len(r) != maxReaderSlugs {
		t.Fatalf("reader holds %d slugs, want %d", len(r), maxReaderSlugs)
	}
	back, err := decodeReader(r.encode())
	if err != nil || len(back) != len(r) || back[0] != r[0] || back[len(back)-1] != r[len(r)-1] {
		t.Fatalf("reader round trip: %v", err)
	}
	if _, err := decodeReader([]byte{1, 2, 3}); err == nil {
		t.Fatal("a truncated record decoded")
	}
}

// One IPv6 subscriber is handed a whole /64: taking a fresh address for every view
// must not count the view again, nor make the client a new unique visitor, just after
// midnight included; another /64 and IPv4 clients are told apart as before.
func TestViewDedupIsPerIPv6Slash64(t *testing.T) {
	s, clock := blogSetup(t)
	clock.Set(time.Date(2026, 11, 29, 23, 50, 0, 0, time.UTC))
	steps := []struct {
		name        string
		advance     time.Duration
		ip          string
		wantCounted bool
	}{
		{"first address of the /64", 0, "2001:db8:1:2::1", true},
		{"another address of the same /64", time.Minute, "2001:db8:1:2:aaaa::7", false},
		{"the same /64 past midnight", 15 * time.Minute, "2001:db8:1:2::ffff", false},
		{"another /64", 0, "2001:db8:1:3::1", true},
		{"an IPv4 client", 0, "203.0.113.9", true},
		{"the first /64 once its window has passed", 16 * time.Minute, "2001:db8:1:2::2", true},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		res, err := s.RecordView(Hit{Slug: "post", IP: st.ip})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.Counted != st.wantCounted {
			t.Fatalf("%s: counted=%v, want %v", st.name, res.Counted, st.wantCounted)
		}
	}
	st, err := s.BlogStats(10, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Day one: the first /64 once. Day two: the first /64, the second, the IPv4 client.
	want := []DayStats{{"2026-11-29", 1, 1}, {"2026-11-30", 3, 3}}
	if fmt.Sprint(st.Daily) != fmt.Sprint(want) {
		t.Fatalf("daily = %v, want %v", st.Daily, want)
	}
}
