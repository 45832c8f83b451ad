package http

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/hangarhq/hangar/store"
)

// checkRefusal fails unless err is the JSON 400 a client is meant to see.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var ae *apiError
	if !errors.As(err, &ae) || ae.status != 400 || ae.code == "" || ae.message == "" {
		t.Fatalf("refusal %#v is not a 400 with a code and a sentence", err)
	}
}

// checkText fails unless v is what may be stored: NFC, within its bounds in
// characters, and free of control characters (but newline, CR and tab in content)
// and of the bidi and invisible ones.
func checkText(t *testing.T, field, v string, minRunes, maxRunes int, multiline bool) {
	t.Helper()
	if !utf8.ValidString(v) || !norm.NFC.IsNormalString(v) {
		t.Fatalf("%s %q is not NFC UTF-8", field, v)
	}
	if n := utf8.RuneCountInString(v); n < minRunes || n > maxRunes || strings.TrimSpace(v) == "" {
		t.Fatalf("%s %q has %d characters, want %d to %d and not blank", field, v, n, minRunes, maxRunes)
	}
	for _, r := range v {
		if multiline && (r == '\n' || r == '\r' || r == '\t' || r == '\u200c' || r == '\u200d') {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) ||
			(r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			t.Fatalf("%s %q keeps %U", field, v, r)
		}
	}
}

// FuzzBlogBodies feeds the same bytes to every blog body decoder: each either refuses
// with a 400 or returns fields fit to store.
func FuzzBlogBodies(f *testing.F) {
	seeds := []string{
		`{"name":"Kim","content":"hello","password":"secret1"}`,
		`{"name":"홍길동","content":"좋은 글\n\t감사","password":"비밀번호1"}`,
		`{"name":"a\u202eb","content":"c","password":"pppp"}`,
		`{"name":"n","content":"\u200b\ufeff","password":"pppp"}`,
		`{"content":"line\u2028two","password":"pppp"}`,
		`{"password":"pppp"}`,
		`{"name":"n","email":"a@example.com","message":"m"}`,
		`{"name":"n","email":"Eve <eve@example.com>","message":"m"}`,
		`{"name":"n","email":"a\u200b@example.com","message":"m"}`,
		`{"name":1}`, `[]`, `null`, ``, `   `, `{`, `"x"`, "{\"name\":\"\xff\"}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if c, err := decodeNewComment(body); err != nil {
			checkRefusal(t, err)
		} else {
			checkText(t, "name", c.Name, commentNameMin, commentNameMax, false)
			checkText(t, "content", c.Content, commentContentMin, commentContentMax, true)
			if passwordField(c.Password) != nil {
				t.Fatalf("password %q accepted", c.Password)
			}
		}
		if c, err := decodeEditComment(body); err != nil {
			checkRefusal(t, err)
		} else {
			checkText(t, "content", c.Content, commentContentMin, commentContentMax, true)
		}
		if _, err := decodeDeleteComment(body); err != nil {
			checkRefusal(t, err)
		}
		if q, err := decodeInquiry(body); err != nil {
			checkRefusal(t, err)
		} else {
			checkText(t, "name", q.Name, 1, inquiryNameMax, false)
			checkText(t, "email", q.Email, 3, inquiryEmailMax, false)
			checkText(t, "message", q.Message, 1, inquiryMessageMax, true)
		}
	})
}

// FuzzPathSlug: whatever a path carries, the slug handed to the store is one the
// store accepts, or the client gets a 400.
func FuzzPathSlug(f *testing.F) {
	for _, s := range []string{"hello-world", "Hello-World", "%ED%95%9C%EA%B8%80-%EA%B8%80", "2026%2Fpost", "a%zz", "%2e%2e", "a%00b", "a%E2%80%AEb", "%", "a/b", "a//b", "%5C"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		slug, err := pathSlug(raw)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if err := store.ValidateSlug(slug); err != nil {
			t.Fatalf("pathSlug(%q) = %q, which the store refuses: %v", raw, slug, err)
		}
	})
}
