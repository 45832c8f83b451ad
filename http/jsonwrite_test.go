package http

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

func ptr(b bool) *bool { return &b }

// checkViewJSON fails unless appendViewJSON writes what json.Marshal writes for the
// same answer, byte for byte.
func checkViewJSON(t *testing.T, slug string, views uint64, counted *bool) {
	t.Helper()
	want, err := json.Marshal(viewResponse{Slug: slug, Views: views, Counted: counted})
	if err != nil {
		t.Fatal(err)
	}
	got := appendViewJSON(nil, slug, views, counted)
	if !bytes.Equal(got, want) {
		t.Fatalf("slug %q views %d counted %v:\n got %s\nwant %s", slug, views, counted, got, want)
	}
	// Appending after existing bytes must leave them alone.
	prefix := []byte("prefix")
	if got := appendViewJSON(prefix, slug, views, counted); !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("slug %q: appending after a prefix gave %s", slug, got)
	}
}

func TestAppendViewJSONMatchesMarshal(t *testing.T) {
	slugs := []struct{ name, slug string }{
		{"plain", "2026/hello-world"},
		{"empty", ""},
		{"hangul", "한글-글"},
		{"decomposed", "e\u0301"},
		{"emoji", "post-🚀"},
		{"longest", strings.Repeat("a", 200)},
		{"longer than the stack buffer", strings.Repeat("가", 200)},
		{"html", "<script>alert(1)</script>&amp;"},
		{"less than", "a<b"},
		{"greater than", "a>b"},
		{"ampersand", "a&b"},
		{"quote", `say "hi"`},
		{"backslash", `a\b`},
		{"NUL", "a\x00b"},
		{"unit separator", "a\x1fb"},
		{"controls", "a\x00b\x01c\x1fd"},
		{"short escapes", "\b\f\n\r\t"},
		{"DEL is written as is", "a\x7fb"},
		{"line separator", "a\u2028b"},
		{"paragraph separator", "a\u2029b"},
		{"invalid byte", "a\xffb"},
		{"invalid UTF-8", "a\xffb\xc3"},
		{"truncated rune at the end", "abc\xe2\x82"},
		{"surrogate half", "\xed\xa0\x80"},
		{"a real U+FFFD", "a\ufffdb"},
		{"C1 control", "a\u0085b"},
		{"bidi override", "a\u202eb"},
	}
	views := []uint64{0, 1, 9, 10, 1234567, math.MaxUint64}
	counted := []*bool{nil, ptr(true), ptr(false)}
	for _, s := range slugs {
		t.Run(s.name, func(t *testing.T) {
			for _, v := range views {
				for _, c := range counted {
					checkViewJSON(t, s.slug, v, c)
				}
			}
		})
	}
}

// jsonVerbatim is the fast path's gate: it must refuse every string that
// encoding/json would change, and accept the ordinary slugs it exists for.
// POST /orders' answer is what c.JSON wrote for the same map, byte for byte.
func TestAppendOrderCreatedJSONMatchesMarshal(t *testing.T) {
	for _, tc := range []struct {
		id     int64
		status string
	}{{1, "pending"}, {0, ""}, {math.MaxInt64, "provisioning"}, {math.MinInt64, "a<b&\"c\"\u2028\xff"}} {
		want, err := json.Marshal(fiber.Map{"order_id": tc.id, "status": tc.status})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendOrderCreatedJSON(nil, tc.id, tc.status); !bytes.Equal(got, want) {
			t.Errorf("order %d status %q:\n got %s\nwant %s", tc.id, tc.status, got, want)
		}
	}
}

func TestJSONVerbatim(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"2026/hello-world", true},
		{"한글-글", true},
		{"a\x7fb", true},
		{"a\ufffdb", true},
		{"", true},
		{"<", false},
		{">", false},
		{"&", false},
		{`"`, false},
		{`\`, false},
		{"\x00", false},
		{"\x1f", false},
		{"\u2028", false},
		{"\u2029", false},
		{"\xff", false},
		{"\xe2\x82", false},
	}
	for _, tt := range tests {
		if got := jsonVerbatim(tt.s); got != tt.want {
			t.Errorf("jsonVerbatim(%q) = %v, want %v", tt.s, got, tt.want)
		}
		q, _ := json.Marshal(tt.s)
		if unchanged := string(q) == `"`+tt.s+`"`; unchanged != tt.want {
			t.Errorf("%q: encoding/json leaves it unchanged = %v; the table is wrong", tt.s, unchanged)
		}
	}
}

func FuzzViewJSON(f *testing.F) {
	f.Add("2026/hello-world", uint64(3), uint8(0))
	f.Add("한글-글", uint64(0), uint8(1))
	f.Add("<a href=\"x\">&</a>", uint64(math.MaxUint64), uint8(2))
	f.Add("a\u2028b\x00\xff", uint64(42), uint8(1))
	f.Add("x\u2029y", uint64(7), uint8(2))
	f.Add("\xed\xa0\x80\t\\", uint64(10), uint8(0))
	f.Fuzz(func(t *testing.T, slug string, views uint64, c uint8) {
		var counted *bool
		switch c % 3 {
		case 1:
			counted = ptr(false)
		case 2:
			counted = ptr(true)
		}
		checkViewJSON(t, slug, views, counted)
	})
}

// The handlers used to answer through c.JSON; a client must not see any difference
// in status, body or Content-Type, so both are served by a real Fiber app and compared.
func TestSendJSONAnswersAsCtxJSON(t *testing.T) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	counted := true
	cases := []struct {
		name    string
		before  func(c *fiber.Ctx) error
		after   func(c *fiber.Ctx) error
		wantRaw string
	}{
		{"webhook fresh",
			func(c *fiber.Ctx) error { return c.JSON(webhookResponse{OK: true}) },
			func(c *fiber.Ctx) error { return sendJSON(c, webhookOKJSON) },
			`{"ok":true}`},
		{"webhook duplicate",
			func(c *fiber.Ctx) error { return c.JSON(webhookResponse{OK: true, Duplicate: true}) },
			func(c *fiber.Ctx) error { return sendJSON(c, webhookDuplicateJSON) },
			`{"ok":true,"duplicate":true}`},
		{"count view",
			func(c *fiber.Ctx) error {
				return c.JSON(viewResponse{Slug: "2026/hello-world", Views: 3, Counted: &counted})
			},
			func(c *fiber.Ctx) error {
				var buf [viewJSONBuf]byte
				return sendJSON(c, appendViewJSON(buf[:0], "2026/hello-world", 3, &counted))
			},
			`{"slug":"2026/hello-world","views":3,"counted":true}`},
		{"view total",
			func(c *fiber.Ctx) error { return c.JSON(viewResponse{Slug: "a<b", Views: 0}) },
			func(c *fiber.Ctx) error {
				var buf [viewJSONBuf]byte
				return sendJSON(c, appendViewJSON(buf[:0], "a<b", 0, nil))
			},
			`{"slug":"a\u003cb","views":0}`},
	}
	for _, tc := range cases {
		app.Get("/before/"+strings.ReplaceAll(tc.name, " ", "-"), tc.before)
		app.Get("/after/"+strings.ReplaceAll(tc.name, " ", "-"), tc.after)
	}
	get := func(t *testing.T, path string) (int, http.Header, []byte) {
		t.Helper()
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header, body
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := strings.ReplaceAll(tc.name, " ", "-")
			ws, wh, wb := get(t, "/before/"+path)
			gs, gh, gb := get(t, "/after/"+path)
			if string(wb) != tc.wantRaw {
				t.Fatalf("c.JSON wrote %s; the expected body in this table is stale", wb)
			}
			if gs != ws || !bytes.Equal(gb, wb) {
				t.Fatalf("answered %d %s, c.JSON answers %d %s", gs, gb, ws, wb)
			}
			for _, h := range []string{"Content-Type", "Content-Length"} {
				if gh.Get(h) != wh.Get(h) {
					t.Fatalf("%s = %q, c.JSON sets %q", h, gh.Get(h), wh.Get(h))
				}
			}
		})
	}
}

// BenchmarkViewAnswer measures the cost of writing one POST /api/views answer into a
// response, the way countView did (c.JSON) and does (appendViewJSON + sendJSON).
func BenchmarkViewAnswer(b *testing.B) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	for _, s := range []struct{ name, slug string }{
		{"ascii", "2026/hello-world"}, {"hangul", "한글-글"}, {"escaped", "a<b"},
	} {
		slug := s.slug
		b.Run("ctx.JSON/"+s.name, func(b *testing.B) {
			c := app.AcquireCtx(&fasthttp.RequestCtx{})
			defer app.ReleaseCtx(c)
			counted := true
			b.ReportAllocs()
			for b.Loop() {
				if err := c.JSON(viewResponse{Slug: slug, Views: 12345, Counted: &counted}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("append/"+s.name, func(b *testing.B) {
			c := app.AcquireCtx(&fasthttp.RequestCtx{})
			defer app.ReleaseCtx(c)
			counted := true
			b.ReportAllocs()
			for b.Loop() {
				var buf [viewJSONBuf]byte
				if err := sendJSON(c, appendViewJSON(buf[:0], slug, 12345, &counted)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWebhookAnswer is BenchmarkViewAnswer for the webhook's {"ok":true}.
func BenchmarkWebhookAnswer(b *testing.B) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	b.Run("ctx.JSON", func(b *testing.B) {
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		defer app.ReleaseCtx(c)
		b.ReportAllocs()
		for b.Loop() {
			if err := c.JSON(webhookResponse{OK: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("precomputed", func(b *testing.B) {
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		defer app.ReleaseCtx(c)
		b.ReportAllocs()
		for b.Loop() {
			if err := sendJSON(c, webhookOKJSON); err != nil {
				b.Fatal(err)
			}
		}
	})
}
