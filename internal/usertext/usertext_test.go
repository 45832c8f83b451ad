package usertext

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestSlug(t *testing.T) {
	decomposed := "\u1112\u1161\u11ab\u1100\u1173\u11af" // 한글 as jamo (NFD)
	cases := []struct {
		name, in, want string // want "" means refused
	}{
		{"ascii", "hello-world", "hello-world"},
		{"path", "2026/11/my_post.html", "2026/11/my_post.html"},
		{"capitals", "Hello-World", "Hello-World"},
		{"hangul", "한글-글", "한글-글"},
		{"hangul decomposed becomes NFC", decomposed, "한글"},
		{"inner space", "hello world", "hello world"},
		{"dots inside a segment", "a..b", "a..b"},
		{"percent stays literal", "100%", "100%"},
		{"at the byte bound", strings.Repeat("a", MaxSlugBytes), strings.Repeat("a", MaxSlugBytes)},
		{"hangul at the byte bound", strings.Repeat("글", MaxSlugBytes/3), strings.Repeat("글", MaxSlugBytes/3)},

		{"emoji with its variation selector", "love-❤️", "love-❤️"},

		{"empty", "", ""},
		// Invisible fillers: "post" and "post" + U+3164 looked alike and were two slugs.
		{"hangul filler at the end", "postㅤ", ""},
		{"choseong filler inside", "poᅟst", ""},
		{"halfwidth filler", "poﾠst", ""},
		{"combining grapheme joiner", "po͏st", ""},
		{"one byte over", strings.Repeat("a", MaxSlugBytes+1), ""},
		{"hangul over the bound", strings.Repeat("글", MaxSlugBytes/3+1), ""},
		{"slash", "/", ""},
		{"backslash", "\\", ""},
		{"backslash inside", "a\\b", ""},
		{"dot", ".", ""},
		{"dotdot", "..", ""},
		{"traversal", "../etc/passwd", ""},
		{"inner traversal", "a/../b", ""},
		{"dot segment", "a/./b", ""},
		{"leading slash", "/a", ""},
		{"trailing slash", "a/", ""},
		{"double slash", "a//b", ""},
		{"NUL", "a\x00b", ""},
		{"tab", "a\tb", ""},
		{"newline", "a\nb", ""},
		{"DEL", "a\x7fb", ""},
		{"C1", "a\u0085b", ""},
		{"RLO", "a\u202eb", ""},
		{"ZWSP", "a\u200bb", ""},
		{"LRI", "a\u2066b", ""},
		{"BOM", "\ufeffa", ""},
		{"line separator", "a\u2028b", ""},
		{"leading space", " a", ""},
		{"trailing ideographic space", "a\u3000", ""},
		{"invalid UTF-8", "a\xffb", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Slug(c.in)
			if c.want == "" {
				if err == nil {
					t.Fatalf("Slug(%q) = %q, want refused", c.in, got)
				}
				if !errors.Is(err, ErrInvalidSlug) {
					t.Fatalf("Slug(%q) error %v does not wrap ErrInvalidSlug", c.in, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Slug(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

// Every slug the store accepted before (a-z 0-9 - _ . / without dot segments) must stay
// valid and unchanged, or stored totals could no longer be read.
func TestSlugKeepsOldSlugs(t *testing.T) {
	for _, s := range []string{"hello-world", "2026/11/my_post.html", "a_b.c", "x/y/z", "0"} {
		if got, err := Slug(s); err != nil || got != s {
			t.Errorf("Slug(%q) = %q, %v", s, got, err)
		}
	}
}

func TestLine(t *testing.T) {
	cases := []struct {
		in, want string
		refused  rune
	}{
		{in: "  Kim  ", want: "Kim"},
		{in: "\u1112\u1161\u11ab", want: "한"},
		{in: "a@example.com", want: "a@example.com"},
		{in: "evil\u202egpj.exe", refused: '\u202e'},
		{in: "a\u200bb", refused: '\u200b'},
		{in: "a\u200fb", refused: '\u200f'},
		{in: "a\u2066b", refused: '\u2066'},
		{in: "a\u2069b", refused: '\u2069'},
		{in: "a\ufeffb", refused: '\ufeff'},
		{in: "a\u2028b", refused: '\u2028'},
		{in: "a\u2029b", refused: '\u2029'},
		{in: "a\tb", refused: '\t'},
		{in: "a\nb", refused: '\n'},
		{in: "a\x00b", refused: 0},
		{in: "ㅤ", refused: 'ㅤ'}, // a blank-looking name
		{in: "Kimᅠ", refused: 'ᅠ'},
		{in: "민수❤️", want: "민수❤️"},
	}
	for _, c := range cases {
		got, err := Line(c.in)
		if c.want != "" {
			if err != nil || got != c.want {
				t.Errorf("Line(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		var he *HiddenError
		if !errors.As(err, &he) || he.Rune != c.refused {
			t.Errorf("Line(%q) = %q, %v; want refused for %U", c.in, got, err, c.refused)
		}
	}
	if _, err := Line("a\xffb"); !errors.Is(err, ErrNotUTF8) {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func TestContent(t *testing.T) {
	family := "👨\u200d👩\u200d👧"
	cases := []struct {
		name, in, want string
		refused        bool
	}{
		{name: "lines and tabs stay", in: "a\n\tb\r\nc", want: "a\n\tb\r\nc"},
		{name: "joiners stay", in: family + " خواهم\u200cرفت", want: family + " خواهم\u200cرفت"},
		{name: "bidi override removed", in: "abc\u202edef\u202c", want: "abcdef"},
		{name: "isolates removed", in: "\u2066x\u2069\u2067y\u2068", want: "xy"},
		{name: "zero width and BOM removed", in: "\ufeffa\u200bb\u200e\u200fc\u061c\u2060", want: "abc"},
		{name: "separators become newlines", in: "a\u2028b\u2029c", want: "a\nb\nc"},
		{name: "NFC", in: "\u1112\u1161\u11ab", want: "한"},
		{name: "NFC after a removal in the middle of a syllable", in: "\u1112\u200b\u1161", want: "하"},
		{name: "hangul fillers removed", in: "ㅤㅤ", want: ""},
		{name: "fillers inside removed", in: "aㅤbﾠc͏d", want: "abcd"},
		{name: "emoji keep their variation selector", in: "good ❤️", want: "good ❤️"},
		{name: "NUL refused", in: "a\x00b", refused: true},
		{name: "escape refused", in: "a\x1b[31mred", refused: true},
		{name: "C1 refused", in: "a\u0085b", refused: true},
		{name: "invalid UTF-8", in: "\xff", refused: true},
	}
	for _, c := range cases {
		got, err := Content(c.in)
		if c.refused {
			if err == nil {
				t.Errorf("%s: Content(%q) = %q, want refused", c.name, c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: Content(%q) = %q, %v; want %q", c.name, c.in, got, err, c.want)
		}
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"hello-world", "Hello-World", "한글-글", "\u1112\u1161\u11ab", "a/b", "../x", "a\u202eb", "", "/", ".", "..", "a\x00", "\xff", "a b", " a", "a/./b", "%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Slug(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidSlug) {
				t.Fatalf("error %v does not wrap ErrInvalidSlug", err)
			}
			return
		}
		if got == "" || len(got) > MaxSlugBytes || !utf8.ValidString(got) || !norm.NFC.IsNormalString(got) {
			t.Fatalf("Slug(%q) = %q: empty, too long, not UTF-8 or not NFC", in, got)
		}
		for _, r := range got {
			if r == '\\' || hidden(r) {
				t.Fatalf("Slug(%q) = %q keeps %U", in, got, r)
			}
		}
		for seg := range strings.SplitSeq(got, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("Slug(%q) = %q has segment %q", in, got, seg)
			}
		}
		if unicode.IsSpace([]rune(got)[0]) {
			t.Fatalf("Slug(%q) = %q starts with space", in, got)
		}
		// The canonical form is its own canonical form: the store can check a slug by
		// normalising it again.
		if again, err := Slug(got); err != nil || again != got {
			t.Fatalf("Slug(Slug(%q)) = %q, %v; want %q", in, again, err, got)
		}
	})
}

func FuzzContent(f *testing.F) {
	for _, s := range []string{"hello\nworld", "a\u202eb", "\ufeff", "\u1112\u200b\u1161", "a\x00", "a\u2028b", "👨\u200d👩"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Content(in)
		if err != nil {
			return
		}
		if !norm.NFC.IsNormalString(got) || !utf8.ValidString(got) {
			t.Fatalf("Content(%q) = %q is not NFC UTF-8", in, got)
		}
		for _, r := range got {
			if stripped(r) || controlInContent(r) || r == '\u2028' || r == '\u2029' {
				t.Fatalf("Content(%q) = %q keeps %U", in, got, r)
			}
		}
		if again, err := Content(got); err != nil || again != got {
			t.Fatalf("Content is not idempotent on %q: %q, %v", got, again, err)
		}
	})
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{" Kim ", "a\u202eb", "a@example.com", "\u1112\u1161\u11ab", "a\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Line(in)
		if err != nil {
			return
		}
		if !norm.NFC.IsNormalString(got) || strings.TrimSpace(got) != got {
			t.Fatalf("Line(%q) = %q: not NFC or not trimmed", in, got)
		}
		for _, r := range got {
			if hidden(r) {
				t.Fatalf("Line(%q) = %q keeps %U", in, got, r)
			}
		}
	})
}
