// Package usertext checks and normalises text that arrives from the public internet
// before it becomes a key or is shown to someone else: blog slugs, comment names and
// content, inquiry names and e-mails.
//
// Everything is normalised to Unicode NFC first, so that a word typed on a phone that
// composes Hangul syllables and the same word decomposed by another keyboard are one
// slug and count the same characters. What is then refused or removed are characters
// that show nothing or reorder what is shown (bidi overrides and isolates, zero-width
// characters, byte order marks), control characters, and for slugs the path forms
// that could traverse or alias.
//
// It is pure Go with no I/O, so the store (keys), the HTTP API (requests) and the
// command line (the --seed-views file) share one definition.
package usertext
