package http_test

import (
	"fmt"
	"net/http"
	"testing"
)

// Text that shows nothing but is neither white space nor a character usertext removes
// was stored: a name of the Braille blank U+2800 (the usual blank nickname once the
// Hangul fillers are refused) or of a lone variation selector, a comment of nothing
// but zero-width joiners, a message of a lone combining mark. Each is refused as
// missing; the same characters beside visible ones are kept.
func TestBlogBlankLookingTextIsRefused(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	comment := func(name, content string) map[string]string {
		return map[string]string{"name": name, "content": content, "password": "pppp"}
	}
	inquiry := func(name, message string) map[string]string {
		return map[string]string{"name": name, "email": "a@example.com", "message": message}
	}
	tests := []struct {
		name   string
		method string
		path   string
		body   map[string]string
		code   string // "" when accepted
	}{
		{"name of a braille blank", http.MethodPost, "/api/comments/p", comment("\u2800", "c"), "invalid_name"},
		{"name of braille blanks between spaces", http.MethodPost, "/api/comments/p", comment(" \u2800 \u2800 ", "c"), "invalid_name"},
		{"name of a variation selector", http.MethodPost, "/api/comments/p", comment("\ufe0f", "c"), "invalid_name"},
		{"name of a combining mark", http.MethodPost, "/api/comments/p", comment("\u0301\u0301", "c"), "invalid_name"},
		{"name of an ideographic space", http.MethodPost, "/api/comments/p", comment("\u3000", "c"), "invalid_name"},
		{"content of zero-width joiners", http.MethodPost, "/api/comments/p", comment("n", "\u200d\u200c\u200d"), "invalid_content"},
		{"content of braille blanks and newlines", http.MethodPost, "/api/comments/p", comment("n", "\u2800\n\u2800\n"), "invalid_content"},
		{"content of a soft hyphen", http.MethodPost, "/api/comments/p", comment("n", "\u00ad"), "invalid_content"},
		{"inquiry name of a braille blank", http.MethodPost, "/api/inquiries", inquiry("\u2800", "m"), "invalid_name"},
		{"inquiry message of a combining mark", http.MethodPost, "/api/inquiries", inquiry("n", "\u0301"), "invalid_message"},

		{"name with an accent", http.MethodPost, "/api/comments/p", comment("e\u0301", "c"), ""},
		{"name of an emoji with its selector", http.MethodPost, "/api/comments/p", comment("❤\ufe0f", "c"), ""},
		{"content of one punctuation mark", http.MethodPost, "/api/comments/p", comment("n", "?"), ""},
		{"content of a family emoji", http.MethodPost, "/api/comments/p", comment("n", "👨\u200d👩\u200d👧"), ""},
		{"name in devanagari", http.MethodPost, "/api/comments/p", comment("कि", "c"), ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.do(t, tt.method, tt.path, tt.body, blogIPHeader, fmt.Sprintf("10.4.0.%d", i))
			if tt.code == "" {
				wantStatus(t, r, 201, "")
				return
			}
			wantStatus(t, r, 400, tt.code)
		})
	}

	r := env.do(t, http.MethodPost, "/api/comments/q", comment("n", "c"), blogIPHeader, "10.4.1.1")
	wantStatus(t, r, 201, "")
	var c struct{ ID uint64 }
	r.JSON(t, &c)
	r = env.do(t, http.MethodPut, fmt.Sprintf("/api/comments/q/%d", c.ID), map[string]string{"content": "\u200d", "password": "pppp"}, blogIPHeader, "10.4.1.2")
	wantStatus(t, r, 400, "invalid_content")
}
