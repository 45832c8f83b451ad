package usertext

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxSlugBytes bounds a slug in bytes after NFC normalisation. 200 bytes hold 66
// Hangul syllables (3 bytes each) or 200 ASCII characters; store records keep a
// slug's length in one byte, so it must stay below 256.
const MaxSlugBytes = 200

// ErrInvalidSlug is wrapped by every error Slug returns.
var ErrInvalidSlug = errors.New("invalid slug")

// Slug returns the canonical (NFC) form of a slug, or an error wrapping ErrInvalidSlug
// whose text is a sentence a client can act on.
//
// Any non-empty UTF-8 is accepted (Hangul, capitals, punctuation) except:
//   - control characters (Cc: NUL, tab, newline, DEL, C1), format characters (Cf:
//     bidi overrides and isolates, zero-width spaces and joiners, the byte order mark)
//     and the line and paragraph separators U+2028 and U+2029: they hide or reorder
//     what a reader of the admin list sees, so two slugs would look the same;
//   - leading or trailing white space, for the same reason;
//   - a backslash anywhere, and "/" that would make an empty, "." or ".." segment
//     ("/", "a//b", "../x", "a/./b"): slugs end up in URL paths and file names.
//
// Capitals are kept: "Hello-World" and "hello-world" are different posts, as they are
// different URLs.
func Slug(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", fmt.Errorf("%w: the slug is not valid UTF-8", ErrInvalidSlug)
	}
	s := norm.NFC.String(raw)
	if s == "" {
		return "", fmt.Errorf("%w: the slug is empty", ErrInvalidSlug)
	}
	if len(s) > MaxSlugBytes {
		return "", fmt.Errorf("%w: the slug is %d bytes after NFC normalisation; at most %d are allowed", ErrInvalidSlug, len(s), MaxSlugBytes)
	}
	for _, r := range s {
		if r == '\\' {
			return "", fmt.Errorf("%w: a backslash is not allowed in a slug", ErrInvalidSlug)
		}
		if hidden(r) {
			return "", fmt.Errorf("%w: the slug contains the control or invisible character %U", ErrInvalidSlug, r)
		}
	}
	if first, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(first) {
		return "", fmt.Errorf("%w: the slug starts with white space", ErrInvalidSlug)
	}
	if last, _ := utf8.DecodeLastRuneInString(s); unicode.IsSpace(last) {
		return "", fmt.Errorf("%w: the slug ends with white space", ErrInvalidSlug)
	}
	for seg := range strings.SplitSeq(s, "/") {
		switch seg {
		case "":
			return "", fmt.Errorf("%w: the slug may not start or end with \"/\" or contain \"//\"", ErrInvalidSlug)
		case ".", "..":
			return "", fmt.Errorf("%w: \".\" and \"..\" are not allowed as a slug or a part of one between slashes", ErrInvalidSlug)
		}
	}
	return s, nil
}

// hidden reports the characters no identifier or one-line field may hold: control
// characters, format characters and the two Unicode line separators.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' ||
		invisibleFiller(r)
}

// invisibleFiller is a character that shows nothing and is no format character: the
// Hangul fillers (U+3164, U+115F, U+1160, U+FFA0: the usual way to a blank-looking
// nickname), the combining grapheme joiner U+034F and the rest of Unicode's
// Other_Default_Ignorable_Code_Point. "post" followed by U+3164 looked like "post" and
// was another slug. Variation selectors stay: emoji need them.
func invisibleFiller(r rune) bool {
	return r >= 0x34F && unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}
