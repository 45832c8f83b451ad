package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

const (
	blogAdminToken = "blog-admin-token-0123456789"
	blogIPHeader   = "X-Test-Client-IP"
	blogOrigin     = "https://blog.example"
)

type blogEnv struct {
	url   string
	store *store.Store
	clock *hangartest.Clock
}

// blogStart serves the real Fiber app over a real socket, on a real store in a temp dir
// whose clock the test controls.
func blogStart(t *testing.T, adminToken string) *blogEnv {
	t.Helper()
	clock := hangartest.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(store.Options{Dir: t.TempDir(), Logger: log, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := hangarhttp.New(hangarhttp.Config{
		AdminToken: adminToken, MaxBody: 8192, Logger: log,
		Blog: hangarhttp.BlogConfig{ClientIPHeader: blogIPHeader, CORSOrigins: []string{blogOrigin}},
	}, hangarhttp.Deps{Blog: st, Store: st})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		select {
		case <-done:
		case <-ctx.Done():
			t.Error("server did not stop")
		}
		st.Close()
	})
	return &blogEnv{url: "http://" + ln.Addr().String(), store: st, clock: clock}
}

func (e *blogEnv) do(t *testing.T, method, path string, body any, headers ...string) hangartest.Response {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case nil:
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	return hangartest.Do(t, method, e.url+path, b, headers...)
}

func (e *blogEnv) admin(t *testing.T, method, path string) hangartest.Response {
	t.Helper()
	return e.do(t, method, path, nil, "Authorization", "Bearer "+blogAdminToken)
}

func wantStatus(t *testing.T, r hangartest.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Body)
	}
	if code == "" {
		return
	}
	var e struct{ Error, Code string }
	r.JSON(t, &e)
	if e.Code != code || e.Error == "" {
		t.Fatalf("error body = %s, want code %q and a sentence", r.Body, code)
	}
}

type viewAnswer struct {
	Slug    string `json:"slug"`
	Views   uint64 `json:"views"`
	Counted bool   `json:"counted"`
}

func TestBlogViewDedupWindow(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	steps := []struct {
		name      string
		advance   time.Duration
		ip        string
		counted   bool
		wantTotal uint64
	}{
		{"first view", 0, "203.0.113.5", true, 1},
		{"reload at 29 minutes", 29 * time.Minute, "203.0.113.5", false, 1},
		{"another reader", 0, "2001:db8::1", true, 2},
		{"same reader at 31 minutes", 2 * time.Minute, "203.0.113.5", true, 3},
	}
	for _, st := range steps {
		env.clock.Advance(st.advance)
		r := env.do(t, http.MethodPost, "/api/views/2026/hello-world", nil, blogIPHeader, st.ip)
		wantStatus(t, r, 200, "")
		var got viewAnswer
		r.JSON(t, &got)
		if got != (viewAnswer{"2026/hello-world", st.wantTotal, st.counted}) {
			t.Fatalf("%s: got %+v, want total %d counted %v", st.name, got, st.wantTotal, st.counted)
		}
	}
	r := env.do(t, http.MethodGet, "/api/views/2026/hello-world", nil)
	wantStatus(t, r, 200, "")
	if !bytes.Equal(r.Body, []byte(`{"slug":"2026/hello-world","views":3}`)) {
		t.Fatalf("GET one = %s", r.Body)
	}
	r = env.do(t, http.MethodGet, "/api/views?slugs=2026/hello-world,unknown,2026/hello-world", nil)
	wantStatus(t, r, 200, "")
	var many struct{ Views map[string]uint64 }
	r.JSON(t, &many)
	if len(many.Views) != 2 || many.Views["2026/hello-world"] != 3 || many.Views["unknown"] != 0 {
		t.Fatalf("GET many = %s", r.Body)
	}
	// Reads never count.
	if n, _ := env.store.VisitorCount(); n != 4 {
		t.Fatalf("visitor log has %d hits, want 4", n)
	}
}

func TestBlogHostileSlugs(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	comment := map[string]string{"name": "n", "content": "c", "password": "secret1"}
	long := strings.Repeat("a", store.MaxSlugLen+1)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		code   string
	}{
		{"dot-dot first", http.MethodPost, "/api/views/../etc/passwd", nil, "invalid_slug"},
		{"dot-dot inside", http.MethodPost, "/api/views/a/../b", nil, "invalid_slug"},
		{"encoded dot-dot", http.MethodPost, "/api/views/%2e%2e/x", nil, "invalid_slug"},
		{"too long", http.MethodPost, "/api/views/" + long, nil, "invalid_slug"},
		{"NUL", http.MethodPost, "/api/views/a%00b", nil, "invalid_slug"},
		{"unicode control", http.MethodPost, "/api/views/a%E2%80%AEb", nil, "invalid_slug"},
		{"zero-width space", http.MethodPost, "/api/views/a%E2%80%8Bb", nil, "invalid_slug"},
		{"bidi isolate", http.MethodPost, "/api/views/a%E2%81%A6b", nil, "invalid_slug"},
		{"byte order mark", http.MethodPost, "/api/views/%EF%BB%BFa", nil, "invalid_slug"},
		{"not UTF-8", http.MethodPost, "/api/views/a%FFb", nil, "invalid_slug"},
		{"hangul over the byte bound", http.MethodPost, "/api/views/" + strings.Repeat("%EA%B8%80", store.MaxSlugLen/3+1), nil, "invalid_slug"},
		{"empty", http.MethodPost, "/api/views/", nil, "invalid_slug"},
		{"slash", http.MethodPost, "/api/views/%2F", nil, "invalid_slug"},
		{"backslash", http.MethodPost, "/api/views/%5C", nil, "invalid_slug"},
		{"backslash inside", http.MethodPost, "/api/views/a%5Cb", nil, "invalid_slug"},
		{"dot", http.MethodPost, "/api/views/.", nil, "invalid_slug"},
		{"encoded dot", http.MethodPost, "/api/views/%2E", nil, "invalid_slug"},
		{"leading space", http.MethodPost, "/api/views/%20a", nil, "invalid_slug"},
		{"double slash", http.MethodPost, "/api/views/a//b", nil, "invalid_slug"},
		{"encoded double slash", http.MethodPost, "/api/views/a%2F%2Fb", nil, "invalid_slug"},
		{"list with a bidi override", http.MethodGet, "/api/views?slugs=ok,a%E2%80%AEb", nil, "invalid_slug"},
		{"delete a comment under a bad slug", http.MethodDelete, "/api/comments/a%00/1", comment, "invalid_slug"},
		{"read with dot-dot", http.MethodGet, "/api/views/../x", nil, "invalid_slug"},
		{"list with a bad slug", http.MethodGet, "/api/views?slugs=ok,../x", nil, "invalid_slug"},
		{"list with an empty slug", http.MethodGet, "/api/views?slugs=ok,,b", nil, "invalid_slug"},
		{"list without slugs", http.MethodGet, "/api/views", nil, "missing_slugs"},
		{"list too long", http.MethodGet, "/api/views?slugs=" + strings.Repeat("a,", 100) + "a", nil, "too_many_slugs"},
		{"comment on dot-dot", http.MethodPost, "/api/comments/../x", comment, "invalid_slug"},
		{"comment on a long slug", http.MethodPost, "/api/comments/" + long, comment, "invalid_slug"},
		{"comments of a bad slug", http.MethodGet, "/api/comments/a%00", nil, "invalid_slug"},
		{"edit with a bad id", http.MethodPut, "/api/comments/post/abc", comment, "bad_id"},
		{"edit with a bad slug", http.MethodPut, "/api/comments/../1", comment, "invalid_slug"},
		{"delete without an id", http.MethodDelete, "/api/comments/post", comment, "bad_path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.do(t, tt.method, tt.path, tt.body, blogIPHeader, "198.51.100.9")
			wantStatus(t, r, 400, tt.code)
		})
	}
	if n, _ := env.store.VisitorCount(); n != 0 {
		t.Fatalf("visitor log has %d hits after refused requests", n)
	}
	st, err := env.store.BlogStats(10, 1, 10)
	if err != nil || st.TotalViews != 0 || len(st.TopSlugs) != 0 {
		t.Fatalf("stats after refused requests: %+v %v", st, err)
	}
	if list, _ := env.store.AdminComments(10, 0); len(list) != 0 {
		t.Fatalf("comments stored from refused requests: %+v", list)
	}
}

func TestBlogPublicCommentsNeverExposeIPOrHash(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	const ip, password = "192.0.2.77", "correct-horse"
	r := env.do(t, http.MethodPost, "/api/comments/my-post", map[string]string{
		"name": "Ada", "content": `<script>alert("x")</script> & 안녕`, "password": password,
	}, blogIPHeader, ip)
	wantStatus(t, r, 201, "")
	created := r.Body
	list := env.do(t, http.MethodGet, "/api/comments/my-post", nil)
	wantStatus(t, list, 200, "")
	for name, raw := range map[string][]byte{"POST answer": created, "GET list": list.Body} {
		for _, secret := range []string{ip, `"ip"`, "password", "pbkdf2", password} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%s exposes %q: %s", name, secret, raw)
			}
		}
		// Stored as text, returned JSON-escaped: no raw angle brackets reach a page
		// that splices the JSON into HTML.
		if !bytes.Contains(raw, []byte(`\u003cscript\u003ealert(\"x\")\u003c/script\u003e \u0026 안녕`)) {
			t.Errorf("%s does not carry the escaped content: %s", name, raw)
		}
	}
	var got struct {
		Comments []struct {
			ID       uint64
			Name     string
			Content  string
			EditedAt *time.Time `json:"edited_at"`
		}
	}
	list.JSON(t, &got)
	if len(got.Comments) != 1 || got.Comments[0].Content != `<script>alert("x")</script> & 안녕` || got.Comments[0].EditedAt != nil {
		t.Fatalf("comments = %+v", got)
	}
	adm := env.admin(t, http.MethodGet, "/api/admin/comments")
	wantStatus(t, adm, 200, "")
	if !bytes.Contains(adm.Body, []byte(`"ip":"`+ip+`"`)) {
		t.Fatalf("admin list lacks the ip: %s", adm.Body)
	}
	if bytes.Contains(adm.Body, []byte("pbkdf2")) || bytes.Contains(adm.Body, []byte("password")) {
		t.Fatalf("admin list exposes the password hash: %s", adm.Body)
	}
}

func TestBlogCommentPasswords(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	r := env.do(t, http.MethodPost, "/api/comments/post", map[string]string{"name": "kim", "content": "hello", "password": "pw-1234"}, blogIPHeader, "10.0.0.1")
	wantStatus(t, r, 201, "")
	var c struct{ ID uint64 }
	r.JSON(t, &c)
	path := fmt.Sprintf("/api/comments/post/%d", c.ID)

	steps := []struct {
		name   string
		method string
		path   string
		body   map[string]string
		status int
		code   string
	}{
		{"edit, wrong password", http.MethodPut, path, map[string]string{"content": "hacked", "password": "pw-9999"}, 403, "wrong_password"},
		{"delete, wrong password", http.MethodDelete, path, map[string]string{"password": "pw-9999"}, 403, "wrong_password"},
		{"edit through another slug", http.MethodPut, fmt.Sprintf("/api/comments/other/%d", c.ID), map[string]string{"content": "x", "password": "pw-1234"}, 404, "not_found"},
		{"edit an unknown id", http.MethodPut, "/api/comments/post/999", map[string]string{"content": "x", "password": "pw-1234"}, 404, "not_found"},
		{"edit, right password", http.MethodPut, path, map[string]string{"content": "edited", "password": "pw-1234"}, 200, ""},
	}
	for i, st := range steps {
		env.clock.Advance(time.Minute)
		r := env.do(t, st.method, st.path, st.body, blogIPHeader, fmt.Sprintf("10.0.1.%d", i))
		if r.Status != st.status {
			t.Fatalf("%s: status %d, want %d: %s", st.name, r.Status, st.status, r.Body)
		}
		if st.code != "" {
			wantStatus(t, r, st.status, st.code)
		}
	}
	list := env.do(t, http.MethodGet, "/api/comments/post", nil)
	var got struct {
		Comments []struct {
			Content  string
			EditedAt *time.Time `json:"edited_at"`
		}
	}
	list.JSON(t, &got)
	if len(got.Comments) != 1 || got.Comments[0].Content != "edited" || got.Comments[0].EditedAt == nil || !got.Comments[0].EditedAt.Equal(env.clock.Now()) {
		t.Fatalf("after edit: %s", list.Body)
	}
	r = env.do(t, http.MethodDelete, path, map[string]string{"password": "pw-1234"}, blogIPHeader, "10.0.2.1")
	wantStatus(t, r, 200, "")
	list = env.do(t, http.MethodGet, "/api/comments/post", nil)
	if !bytes.Equal(list.Body, []byte(`{"comments":[]}`)) {
		t.Fatalf("after delete: %s", list.Body)
	}
}

func TestBlogWritesAreRateLimitedPerIP(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	inquiry := map[string]string{"name": "Lee", "email": "lee@example.com", "message": "hi"}
	for i := 0; i < store.BlogWriteLimit; i++ {
		wantStatus(t, env.do(t, http.MethodPost, "/api/inquiries", inquiry, blogIPHeader, "10.1.1.1"), 201, "")
	}
	r := env.do(t, http.MethodPost, "/api/inquiries", inquiry, blogIPHeader, "10.1.1.1")
	wantStatus(t, r, 429, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	// The limit covers comments too, and is refused before any password is hashed.
	r = env.do(t, http.MethodPost, "/api/comments/p", map[string]string{"name": "a", "content": "b", "password": "cccc"}, blogIPHeader, "10.1.1.1")
	wantStatus(t, r, 429, "rate_limited")
	wantStatus(t, env.do(t, http.MethodPost, "/api/inquiries", inquiry, blogIPHeader, "10.1.1.2"), 201, "")
	env.clock.Advance(store.BlogWriteWindow)
	wantStatus(t, env.do(t, http.MethodPost, "/api/inquiries", inquiry, blogIPHeader, "10.1.1.1"), 201, "")
	if n, _ := env.store.InquiryCount(); n != store.BlogWriteLimit+2 {
		t.Fatalf("stored %d inquiries, want %d", n, store.BlogWriteLimit+2)
	}
}

func TestBlogBadBodies(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	big := `{"name":"a","content":"` + strings.Repeat("x", 9000) + `","password":"pppp"}`
	tests := []struct {
		name   string
		path   string
		body   string
		status int
		code   string
	}{
		{"oversized comment", "/api/comments/p", big, 413, "body_too_large"},
		{"oversized inquiry", "/api/inquiries", big, 413, "body_too_large"},
		{"malformed comment", "/api/comments/p", `{"name":"a",`, 400, "malformed_json"},
		{"comment as a list", "/api/comments/p", `["a"]`, 400, "malformed_json"},
		{"comment with a numeric name", "/api/comments/p", `{"name":1,"content":"c","password":"pppp"}`, 400, "malformed_json"},
		{"empty comment body", "/api/comments/p", ``, 400, "empty_body"},
		{"malformed inquiry", "/api/inquiries", `{"email":`, 400, "malformed_json"},
		{"no name", "/api/comments/p", `{"name":"  ","content":"c","password":"pppp"}`, 400, "invalid_name"},
		{"long name", "/api/comments/p", `{"name":"` + strings.Repeat("이", 41) + `","content":"c","password":"pppp"}`, 400, "invalid_name"},
		{"name with a control char", "/api/comments/p", `{"name":"a\u0007b","content":"c","password":"pppp"}`, 400, "invalid_name"},
		{"long content", "/api/comments/p", `{"name":"a","content":"` + strings.Repeat("x", 2001) + `","password":"pppp"}`, 400, "invalid_content"},
		{"short password", "/api/comments/p", `{"name":"a","content":"c","password":"ppp"}`, 400, "invalid_password"},
		{"long password", "/api/comments/p", `{"name":"a","content":"c","password":"` + strings.Repeat("p", 73) + `"}`, 400, "invalid_password"},
		{"inquiry with a display-name email", "/api/inquiries", `{"name":"a","email":"Eve <eve@example.com>","message":"m"}`, 400, "invalid_email"},
		{"inquiry without email", "/api/inquiries", `{"name":"a","message":"m"}`, 400, "invalid_email"},
		{"inquiry without message", "/api/inquiries", `{"name":"a","email":"a@example.com"}`, 400, "invalid_message"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.do(t, http.MethodPost, tt.path, tt.body, blogIPHeader, fmt.Sprintf("10.2.0.%d", i))
			wantStatus(t, r, tt.status, tt.code)
		})
	}
	if list, _ := env.store.AdminComments(10, 0); len(list) != 0 {
		t.Fatalf("refused comments were stored: %+v", list)
	}
	if n, _ := env.store.InquiryCount(); n != 0 {
		t.Fatalf("%d refused inquiries were stored", n)
	}
}

func TestBlogAdminNeedsToken(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	routes := []struct{ method, path string }{
		{http.MethodGet, "/api/admin/stats"},
		{http.MethodGet, "/api/admin/comments"},
		{http.MethodDelete, "/api/admin/comments/1"},
		{http.MethodGet, "/api/admin/inquiries"},
	}
	auth := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"no token", nil, 401, "unauthorized"},
		{"not bearer", []string{"Authorization", "Basic " + blogAdminToken}, 401, "unauthorized"},
		{"wrong token", []string{"Authorization", "Bearer wrong-token-0123456789"}, 403, "forbidden"},
		{"token prefix", []string{"Authorization", "Bearer " + blogAdminToken[:10]}, 403, "forbidden"},
	}
	for _, rt := range routes {
		for _, a := range auth {
			t.Run(rt.method+" "+rt.path+" "+a.name, func(t *testing.T) {
				wantStatus(t, env.do(t, rt.method, rt.path, nil, a.headers...), a.status, a.code)
			})
		}
	}
	wantStatus(t, env.admin(t, http.MethodGet, "/api/admin/stats"), 200, "")
	wantStatus(t, env.admin(t, http.MethodDelete, "/api/admin/comments/1"), 404, "not_found")

	unset := blogStart(t, "")
	wantStatus(t, unset.do(t, http.MethodGet, "/api/admin/stats", nil, "Authorization", "Bearer "), 503, "not_configured")
	wantStatus(t, unset.do(t, http.MethodGet, "/api/admin/stats", nil, "Authorization", "Bearer anything"), 503, "not_configured")
}

func TestBlogAdminStatsShape(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	geo := []string{"CF-IPCountry", "KR", "CF-IPCity", "Seoul", "CF-IPLatitude", "37.56", "CF-IPLongitude", "126.97"}
	env.do(t, http.MethodPost, "/api/views/a", nil, append([]string{blogIPHeader, "1.1.1.1"}, geo...)...)
	env.do(t, http.MethodPost, "/api/views/a", nil, blogIPHeader, "1.1.1.2", "CF-IPLatitude", "not-a-number", "CF-IPCity", "Bu\tsan")
	env.do(t, http.MethodPost, "/api/views/b", nil, blogIPHeader, "10.9.8.7, 1.1.1.2") // a list: the last entry is the proxy's
	r := env.admin(t, http.MethodGet, "/api/admin/stats")
	wantStatus(t, r, 200, "")

	var raw map[string]json.RawMessage
	r.JSON(t, &raw)
	for _, k := range []string{"total_views", "today_views", "today_unique_visitors", "top_slugs", "daily", "recent_visitors"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("stats lack %q: %s", k, r.Body)
		}
	}
	var st struct {
		TotalViews          int `json:"total_views"`
		TodayViews          int `json:"today_views"`
		TodayUniqueVisitors int `json:"today_unique_visitors"`
		TopSlugs            []struct {
			Slug  string `json:"slug"`
			Views int    `json:"views"`
		} `json:"top_slugs"`
		Daily []struct {
			Day            string `json:"day"`
			Views          int    `json:"views"`
			UniqueVisitors int    `json:"unique_visitors"`
		} `json:"daily"`
		RecentVisitors []struct {
			TS      string  `json:"ts"`
			IP      string  `json:"ip"`
			Slug    string  `json:"slug"`
			Country string  `json:"country"`
			City    string  `json:"city"`
			Lat     float64 `json:"lat"`
			Lon     float64 `json:"lon"`
		} `json:"recent_visitors"`
	}
	r.JSON(t, &st)
	if st.TotalViews != 3 || st.TodayViews != 3 || st.TodayUniqueVisitors != 2 {
		t.Fatalf("totals: %s", r.Body)
	}
	if len(st.TopSlugs) != 2 || st.TopSlugs[0].Slug != "a" || st.TopSlugs[0].Views != 2 {
		t.Fatalf("top slugs: %+v", st.TopSlugs)
	}
	if len(st.Daily) != 30 || st.Daily[29].Day != "2026-11-29" || st.Daily[29].Views != 3 || st.Daily[29].UniqueVisitors != 2 || st.Daily[0].Day != "2026-10-31" {
		t.Fatalf("daily: %+v", st.Daily)
	}
	if len(st.RecentVisitors) != 3 {
		t.Fatalf("recent visitors: %+v", st.RecentVisitors)
	}
	newest, oldest := st.RecentVisitors[0], st.RecentVisitors[2]
	if ts, err := time.Parse(time.RFC3339, oldest.TS); err != nil || !ts.Equal(env.clock.Now()) {
		t.Fatalf("ts %q is not RFC3339 of the clock: %v", oldest.TS, err)
	}
	if oldest.IP != "1.1.1.1" || oldest.Country != "KR" || oldest.City != "Seoul" || oldest.Lat != 37.56 || oldest.Lon != 126.97 {
		t.Fatalf("oldest visitor: %+v", oldest)
	}
	if mid := st.RecentVisitors[1]; mid.Lat != 0 || mid.City != "Busan" {
		t.Fatalf("hostile geo headers were not cleaned: %+v", mid)
	}
	if newest.IP != "1.1.1.2" || newest.Slug != "b" {
		t.Fatalf("newest visitor: %+v", newest)
	}
}

func TestBlogCORS(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	tests := []struct {
		name, method, path, origin, wantAllow string
	}{
		{"preflight from the blog", http.MethodOptions, "/api/comments/p", blogOrigin, blogOrigin},
		{"simple read from the blog", http.MethodGet, "/api/views/p", blogOrigin, blogOrigin},
		{"another site", http.MethodGet, "/api/views/p", "https://evil.example", ""},
		{"outside /api", http.MethodGet, "/metrics", blogOrigin, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.do(t, tt.method, tt.path, nil, "Origin", tt.origin, "Access-Control-Request-Method", "POST")
			if got := r.Header.Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Fatalf("Access-Control-Allow-Origin = %q, want %q (status %d)", got, tt.wantAllow, r.Status)
			}
		})
	}
}

func TestBlogClientIPFromSocketWithoutHeader(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	// The configured header is absent or garbage: the socket address is used.
	env.do(t, http.MethodPost, "/api/views/p", nil)
	env.do(t, http.MethodPost, "/api/views/p", nil, blogIPHeader, "not-an-ip")
	v, err := env.store.RecentVisitors(2)
	if err != nil || len(v) != 2 || v[0].IP != "127.0.0.1" || v[1].IP != "127.0.0.1" {
		t.Fatalf("visitors = %+v, %v", v, err)
	}
}

// The client IP is the one the trusted proxy put last: the last entry of a list, on
// the header's last line. A proxy that adds a line of its own (HAProxy's forwardfor)
// left the client's line first, and the client chose the IP its views, budgets and
// write window were counted under.
func TestClientIPIsTheTrustedProxysEntry(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	for i, lines := range [][]string{
		{"6.6.6.6", "192.0.2.9"},
		{"6.6.6.6, 7.7.7.7", "10.0.0.1, 192.0.2.9"},
		{"192.0.2.9"},
		{"192.0.2.9:51234"}, // a proxy that sends the port too (Azure)
	} {
		req, err := http.NewRequest(http.MethodPost, env.url+"/api/views/ip-"+strconv.Itoa(i), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			req.Header.Add(blogIPHeader, l)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		v, err := env.store.RecentVisitors(1)
		if err != nil || len(v) != 1 {
			t.Fatalf("recent visitors: %v, %v", v, err)
		}
		if v[0].IP != "192.0.2.9" {
			t.Errorf("header lines %q: client IP taken as %q, want the proxy's 192.0.2.9", lines, v[0].IP)
		}
	}
}
