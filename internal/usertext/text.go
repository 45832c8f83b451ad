package usertext

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ErrNotUTF8 is returned for text that is not valid UTF-8.
var ErrNotUTF8 = errors.New("the text is not valid UTF-8")

// HiddenError names the first character Line refused.
type HiddenError struct{ Rune rune }

func (e *HiddenError) Error() string {
	return fmt.Sprintf("contains the control or invisible character %U, which would hide or reorder what is shown", e.Rune)
}

// Line returns a one-line field (a name, an e-mail address) in NFC with surrounding
// white space trimmed, refusing control characters (Cc, tab and newline too), format
// characters (Cf: U+200B–U+200F, U+202A–U+202E, U+2066–U+2069, U+FEFF and the rest)
// and U+2028/U+2029. Names are shown to other readers and to the operator next to
// content: a right-to-left override in one makes it read as something else.
func Line(v string) (string, error) {
	if !utf8.ValidString(v) {
		return "", ErrNotUTF8
	}
	v = strings.TrimSpace(norm.NFC.String(v))
	for _, r := range v {
		if hidden(r) {
			return "", &HiddenError{Rune: r}
		}
	}
	return v, nil
}

// Content returns multi-line text (a comment, an inquiry's message) in NFC with the
// characters that only hide or reorder text removed, and refuses other control
// characters. What is kept and why:
//   - newline, carriage return and tab: content has lines;
//   - U+200C and U+200D (zero-width non-joiner and joiner): Persian and Indic words
//     and emoji sequences (a family, a flag with a skin tone) need them;
//   - U+2028 and U+2029 become a newline, which is what they mean.
//
// Removed: the invisible fillers (see invisibleFiller: content made only of Hangul
// fillers looked blank and was stored), bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069),
// the marks U+200E, U+200F and U+061C, the zero-width space U+200B, word joiner and
// invisible operators (U+2060–U+2064) and the byte order mark U+FEFF, which pasted text
// often carries without its writer knowing. Any other control character (NUL, escape
// sequences) is refused: no editor produces them.
func Content(v string) (string, error) {
	if !utf8.ValidString(v) {
		return "", ErrNotUTF8
	}
	v = norm.NFC.String(v)
	clean := true
	for _, r := range v {
		if stripped(r) || r == '\u2028' || r == '\u2029' {
			clean = false
			continue
		}
		if controlInContent(r) {
			return "", &HiddenError{Rune: r}
		}
	}
	if clean {
		return v, nil
	}
	var b strings.Builder
	b.Grow(len(v))
	for _, r := range v {
		switch {
		case r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case !stripped(r):
			b.WriteRune(r)
		}
	}
	// Removing a character can leave a sequence that composes differently.
	return norm.NFC.String(b.String()), nil
}

// stripped are the characters Content removes.
func stripped(r rune) bool {
	switch {
	case r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069':
		return true
	case r == '\u200B', r == '\u200E', r == '\u200F', r == '\u061C':
		return true
	case r >= '\u2060' && r <= '\u2064', r == '\uFEFF':
		return true
	}
	return invisibleFiller(r)
}

// controlInContent is a control character content may not hold: Cc but the three that
// lay out lines.
func controlInContent(r rune) bool {
	if r == '\n' || r == '\r' || r == '\t' {
		return false
	}
	return r < 0x20 || (r >= 0x7F && r <= 0x9F)
}
