package http_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/store"
)

// The seed's blog is Korean and links its posts with capitals and Hangul, percent-
// encoded as browsers send them. Both spellings of a Hangul word (composed, NFC, and
// decomposed, NFD) are one post.
func TestBlogSlugsAsTheBlogHasThem(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	nfd := "\u1112\u1161\u11ab\u1100\u1173\u11af-\u1100\u1173\u11af" // 한글-글 decomposed
	steps := []struct {
		name, path, ip string
		wantSlug       string
		wantTotal      uint64
	}{
		{"capitals", "/api/views/Hello-World", "203.0.113.1", "Hello-World", 1},
		{"lower case is another post", "/api/views/hello-world", "203.0.113.1", "hello-world", 1},
		{"hangul, percent-encoded", "/api/views/" + url.PathEscape("한글-글"), "203.0.113.1", "한글-글", 1},
		{"hangul decomposed", "/api/views/" + url.PathEscape(nfd), "203.0.113.2", "한글-글", 2},
		{"hangul with a path", "/api/views/2026/" + url.PathEscape("첫-글"), "203.0.113.1", "2026/첫-글", 1},
		{"an encoded slash is a slash", "/api/views/2026%2F" + url.PathEscape("첫-글"), "203.0.113.2", "2026/첫-글", 2},
		{"dots inside a word", "/api/views/v1..2", "203.0.113.1", "v1..2", 1},
	}
	for _, st := range steps {
		r := env.do(t, http.MethodPost, st.path, nil, blogIPHeader, st.ip)
		wantStatus(t, r, 200, "")
		var got viewAnswer
		r.JSON(t, &got)
		if got.Slug != st.wantSlug || got.Views != st.wantTotal || !got.Counted {
			t.Fatalf("%s: %+v, want slug %q total %d counted", st.name, got, st.wantSlug, st.wantTotal)
		}
	}
	r := env.do(t, http.MethodGet, "/api/views?slugs="+url.QueryEscape("한글-글,"+nfd+",Hello-World"), nil)
	wantStatus(t, r, 200, "")
	if string(r.Body) != `{"views":{"Hello-World":1,"한글-글":2}}` {
		t.Fatalf("totals: %s", r.Body)
	}

	// Comments live under the same canonical slug, whichever spelling posted them.
	r = env.do(t, http.MethodPost, "/api/comments/"+url.PathEscape(nfd), map[string]string{"name": "읽는이", "content": "좋은 글", "password": "secret1"}, blogIPHeader, "203.0.113.3")
	wantStatus(t, r, 201, "")
	var cm struct {
		ID   uint64
		Slug string
	}
	r.JSON(t, &cm)
	if cm.Slug != "한글-글" {
		t.Fatalf("comment slug %q", cm.Slug)
	}
	r = env.do(t, http.MethodGet, "/api/comments/"+url.PathEscape("한글-글"), nil)
	if !strings.Contains(string(r.Body), "좋은 글") {
		t.Fatalf("comments of the NFC slug: %s", r.Body)
	}
	r = env.do(t, http.MethodPut, "/api/comments/"+url.PathEscape(nfd)+"/"+strconv.FormatUint(cm.ID, 10), map[string]string{"content": "고친 글", "password": "secret1"}, blogIPHeader, "203.0.113.3")
	wantStatus(t, r, 200, "")
}

// A path Go's client refuses to send (a bad percent-escape) arrives as written over a
// raw connection, and is refused with the usual JSON error.
func TestBlogSlugBadPercentEncoding(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /api/views/a%zzb HTTP/1.1\r\nHost: blog\r\nContent-Length: 0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"code":"invalid_slug"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if n, _ := env.store.SlugCount(); n != 0 {
		t.Fatalf("%d slugs stored", n)
	}
}

// The byte bound holds after normalisation and the error says what it is.
func TestBlogSlugBoundIsStated(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	atBound := strings.Repeat("글", store.MaxSlugLen/3)
	r := env.do(t, http.MethodPost, "/api/views/"+url.PathEscape(atBound), nil, blogIPHeader, "203.0.113.1")
	wantStatus(t, r, 200, "")
	r = env.do(t, http.MethodPost, "/api/views/"+url.PathEscape(atBound+"글"), nil, blogIPHeader, "203.0.113.1")
	wantStatus(t, r, 400, "invalid_slug")
	if !strings.Contains(string(r.Body), strconv.Itoa(store.MaxSlugLen)+" are allowed") {
		t.Fatalf("the error does not state the bound: %s", r.Body)
	}
}

// One address posting made-up slugs uses up its own budget of new slugs and no one
// else's: another reader's first view of a new post is still counted.
func TestBlogJunkSlugFloodLeavesOthersCounted(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	const flooder = "198.51.100.66"
	refused := 0
	for i := range store.NewSlugsPerClient + 10 {
		r := env.do(t, http.MethodPost, fmt.Sprintf("/api/views/junk-%d", i), nil, blogIPHeader, flooder)
		switch {
		case i < store.NewSlugsPerClient:
			wantStatus(t, r, 200, "")
		default:
			wantStatus(t, r, 429, "new_slug_limit")
			if r.Header.Get("Retry-After") != strconv.Itoa(12*3600) { // noon on the test clock
				t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
			}
			refused++
		}
	}
	if refused != 10 {
		t.Fatalf("%d refused", refused)
	}
	r := env.do(t, http.MethodPost, "/api/views/"+url.PathEscape("새-글"), nil, blogIPHeader, "198.51.100.7")
	wantStatus(t, r, 200, "")
	var got viewAnswer
	r.JSON(t, &got)
	if !got.Counted || got.Views != 1 {
		t.Fatalf("another reader's new post: %+v", got)
	}
	// The flooder still counts as a reader of real posts.
	r = env.do(t, http.MethodPost, "/api/views/"+url.PathEscape("새-글"), nil, blogIPHeader, flooder)
	wantStatus(t, r, 200, "")
	if n, _ := env.store.SlugCount(); n != store.NewSlugsPerClient+1 {
		t.Fatalf("slug count %d, want %d", n, store.NewSlugsPerClient+1)
	}
}

type slugsPage struct {
	Slugs    []store.SlugViews `json:"slugs"`
	Count    uint64            `json:"count"`
	MaxSlugs uint64            `json:"max_slugs"`
	Next     string            `json:"next"`
}

func TestBlogAdminListsAndDeletesSlugs(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	if _, err := env.store.SeedViews(map[string]uint64{"junk/a": 1, "junk/b": 2, "junk/c": 3, "post": 10, "한글-글": 5}); err != nil {
		t.Fatal(err)
	}
	list := func(query string) slugsPage {
		t.Helper()
		r := env.admin(t, http.MethodGet, "/api/admin/slugs"+query)
		wantStatus(t, r, 200, "")
		var p slugsPage
		r.JSON(t, &p)
		return p
	}
	p := list("?prefix=junk/&limit=2")
	if fmt.Sprint(p.Slugs) != "[{junk/a 1} {junk/b 2}]" || p.Next != "junk/b" || p.Count != 5 || p.MaxSlugs != store.MaxSlugs {
		t.Fatalf("first page: %+v", p)
	}
	p = list("?prefix=junk/&limit=2&after=" + p.Next)
	if fmt.Sprint(p.Slugs) != "[{junk/c 3}]" || p.Next != "" {
		t.Fatalf("second page: %+v", p)
	}
	p = list("?prefix=" + url.QueryEscape("\u1112\u1161\u11ab")) // 한, decomposed
	if fmt.Sprint(p.Slugs) != "[{한글-글 5}]" {
		t.Fatalf("NFD prefix: %+v", p)
	}

	r := env.admin(t, http.MethodDelete, "/api/admin/slugs/junk/b")
	wantStatus(t, r, 200, "")
	if string(r.Body) != `{"deleted":true,"slug":"junk/b","views":2}` {
		t.Fatalf("delete answer: %s", r.Body)
	}
	r = env.admin(t, http.MethodDelete, "/api/admin/slugs/"+url.PathEscape("한글-글"))
	wantStatus(t, r, 200, "")
	if p := list(""); p.Count != 3 || fmt.Sprint(p.Slugs) != "[{junk/a 1} {junk/c 3} {post 10}]" {
		t.Fatalf("after deletes: %+v", p)
	}

	refused := []struct {
		name, method, path string
		auth               bool
		status             int
		code               string
	}{
		{"no token", http.MethodDelete, "/api/admin/slugs/post", false, 401, "unauthorized"},
		{"list without a token", http.MethodGet, "/api/admin/slugs", false, 401, "unauthorized"},
		{"deleted already", http.MethodDelete, "/api/admin/slugs/junk/b", true, 404, "not_found"},
		{"invalid slug", http.MethodDelete, "/api/admin/slugs/a%E2%80%AEb", true, 400, "invalid_slug"},
		{"limit zero", http.MethodGet, "/api/admin/slugs?limit=0", true, 400, "bad_limit"},
		{"limit too large", http.MethodGet, "/api/admin/slugs?limit=1001", true, 400, "bad_limit"},
		{"prefix with a control character", http.MethodGet, "/api/admin/slugs?prefix=a%00", true, 400, "bad_prefix"},
		{"prefix too long", http.MethodGet, "/api/admin/slugs?prefix=" + strings.Repeat("a", store.MaxSlugLen+1), true, 400, "bad_prefix"},
		{"after with a bidi override", http.MethodGet, "/api/admin/slugs?after=%E2%80%AE", true, 400, "bad_after"},
		// Trimmed, "junk " would have deleted "junkyard" too, and " " every slug.
		{"flood prefix ending in a space", http.MethodDelete, "/api/admin/slugs?max_views=100&prefix=junk%20", true, 400, "bad_prefix"},
		{"flood prefix of a space", http.MethodDelete, "/api/admin/slugs?max_views=100&prefix=%20", true, 400, "bad_prefix"},
		{"list after a space", http.MethodGet, "/api/admin/slugs?after=%20post", true, 400, "bad_after"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			var r = env.do(t, tt.method, tt.path, nil)
			if tt.auth {
				r = env.admin(t, tt.method, tt.path)
			}
			wantStatus(t, r, tt.status, tt.code)
		})
	}
	if p := list(""); p.Count != 3 || fmt.Sprint(p.Slugs) != "[{junk/a 1} {junk/c 3} {post 10}]" {
		t.Fatalf("refused requests changed the slugs: %+v", p)
	}
}

// Names and e-mails with characters that hide or reorder text are refused; in content
// those characters are removed, and everything is stored in NFC.
func TestBlogInvisibleCharactersInInput(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	refused := []struct {
		name, path string
		body       map[string]string
		code       string
	}{
		{"name with a right-to-left override", "/api/comments/p", map[string]string{"name": "admin\u202enimda", "content": "c", "password": "pppp"}, "invalid_name"},
		{"name with a zero-width space", "/api/comments/p", map[string]string{"name": "ad\u200bmin", "content": "c", "password": "pppp"}, "invalid_name"},
		{"name with an isolate", "/api/comments/p", map[string]string{"name": "\u2066x\u2069", "content": "c", "password": "pppp"}, "invalid_name"},
		{"name with a line separator", "/api/comments/p", map[string]string{"name": "a\u2028b", "content": "c", "password": "pppp"}, "invalid_name"},
		{"content of invisible characters only", "/api/comments/p", map[string]string{"name": "n", "content": "\u200b\ufeff\u202e", "password": "pppp"}, "invalid_content"},
		{"content with an escape sequence", "/api/comments/p", map[string]string{"name": "n", "content": "\x1b[2J", "password": "pppp"}, "invalid_content"},
		// Hangul fillers: a blank-looking nickname and comment were stored.
		{"name of a hangul filler", "/api/comments/p", map[string]string{"name": "\u3164", "content": "c", "password": "pppp"}, "invalid_name"},
		{"content of hangul fillers only", "/api/comments/p", map[string]string{"name": "n", "content": "\u3164\u3164", "password": "pppp"}, "invalid_content"},
		{"inquiry e-mail with a zero-width space", "/api/inquiries", map[string]string{"name": "n", "email": "a\u200b@example.com", "message": "m"}, "invalid_email"},
		{"inquiry e-mail with a BOM", "/api/inquiries", map[string]string{"name": "n", "email": "\ufeffa@example.com", "message": "m"}, "invalid_email"},
		{"inquiry name with an override", "/api/inquiries", map[string]string{"name": "n\u202e", "email": "a@example.com", "message": "m"}, "invalid_name"},
	}
	for i, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := env.do(t, http.MethodPost, tt.path, tt.body, blogIPHeader, fmt.Sprintf("10.3.0.%d", i))
			wantStatus(t, r, 400, tt.code)
		})
	}
	if list, _ := env.store.AdminComments(10, 0); len(list) != 0 {
		t.Fatalf("refused comments were stored: %+v", list)
	}
	if n, _ := env.store.InquiryCount(); n != 0 {
		t.Fatalf("%d refused inquiries were stored", n)
	}

	nfdName := "\u1112\u1169\u11bc\u1100\u1175\u11af\u1103\u1169\u11bc" // 홍길동 decomposed
	r := env.do(t, http.MethodPost, "/api/comments/p", map[string]string{
		"name": "  " + nfdName + " ", "content": "line one\u202e\n\tline two\u200b 👨\u200d👩\u200d👧", "password": "pppp",
	}, blogIPHeader, "10.3.1.1")
	wantStatus(t, r, 201, "")
	list, err := env.store.AdminComments(10, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("stored comments: %+v, %v", list, err)
	}
	if list[0].Name != "홍길동" || list[0].Content != "line one\n\tline two 👨\u200d👩\u200d👧" {
		t.Fatalf("stored name %q content %q", list[0].Name, list[0].Content)
	}
	r = env.do(t, http.MethodPost, "/api/inquiries", map[string]string{"name": nfdName, "email": "hong@example.com", "message": "안녕\u2066하세요\u2069"}, blogIPHeader, "10.3.1.2")
	wantStatus(t, r, 201, "")
	qs, err := env.store.Inquiries(1, 0)
	if err != nil || len(qs) != 1 || qs[0].Name != "홍길동" || qs[0].Message != "안녕하세요" {
		t.Fatalf("stored inquiry: %+v, %v", qs, err)
	}
}

func TestBlogAdminClearsAFlood(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	if _, err := env.store.SeedViews(map[string]uint64{"junk/a": 1, "junk/b": 2, "junk/c": 3, "post": 1}); err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, query string
		code        string
	}{
		{"without max_views", "?prefix=junk/", "bad_max_views"},
		{"negative max_views", "?prefix=junk/&max_views=-1", "bad_max_views"},
		{"prefix with a NUL", "?prefix=a%00&max_views=1", "bad_prefix"},
	}
	for _, tt := range refused {
		wantStatus(t, env.admin(t, http.MethodDelete, "/api/admin/slugs"+tt.query), 400, tt.code)
	}
	wantStatus(t, env.do(t, http.MethodDelete, "/api/admin/slugs?max_views=9", nil), 401, "unauthorized")

	r := env.admin(t, http.MethodDelete, "/api/admin/slugs?prefix=junk/&max_views=2")
	wantStatus(t, r, 200, "")
	if string(r.Body) != `{"deleted":2,"more":false}` {
		t.Fatalf("answer: %s", r.Body)
	}
	r = env.admin(t, http.MethodGet, "/api/admin/slugs")
	var p slugsPage
	r.JSON(t, &p)
	if p.Count != 2 || fmt.Sprint(p.Slugs) != "[{junk/c 3} {post 1}]" {
		t.Fatalf("left: %s", r.Body)
	}
}
