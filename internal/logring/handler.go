package logring

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxAttrs bounds one kept record's attribute text, so the ring's memory is bounded
// by its capacity whatever is logged.
const maxAttrs = 2048

// Handler passes every record to the next handler and keeps a scrubbed copy in a Ring.
type Handler struct {
	next   slog.Handler
	ring   *Ring
	scrub  *Scrubber
	prefix string // attributes added by With, already formatted and scrubbed
	group  string // the open group's name with a trailing dot, as keys are prefixed
}

var _ slog.Handler = (*Handler)(nil)

// Tee returns a handler that logs through next and keeps records in ring, scrubbed by
// sc (nil masks only what reads as a credential).
func Tee(next slog.Handler, ring *Ring, sc *Scrubber) *Handler {
	if sc == nil {
		sc = NewScrubber()
	}
	return &Handler{next: next, ring: ring, scrub: sc}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle keeps the record before passing it on: a failing next handler (a closed
// stderr) must not cost the console its log.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		h.appendAttr(&b, h.group, a)
		return b.Len() < maxAttrs
	})
	h.ring.add(Record{Time: r.Time, Level: r.Level, Msg: h.scrub.Scrub(r.Message), Attrs: cut(h.scrub.Scrub(b.String()), maxAttrs)})
	// What goes on (stderr: journalctl, docker logs) is scrubbed too, not only the
	// console's copy.
	out := slog.NewRecord(r.Time, r.Level, h.scrub.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.scrubAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// scrubAttr is a with every configured secret masked in its text, and its whole
// value masked when its key names a secret.
func (h *Handler) scrubAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	switch {
	case a.Value.Kind() == slog.KindGroup:
		attrs := a.Value.Group()
		scrubbed := make([]slog.Attr, len(attrs))
		for i, ga := range attrs {
			scrubbed[i] = h.scrubAttr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(scrubbed...)}
	case secretKey(a.Key) && a.Value.String() != "":
		return slog.String(a.Key, Mask)
	case a.Value.Kind() == slog.KindString, a.Value.Kind() == slog.KindAny:
		if v := a.Value.String(); h.scrub.Scrub(v) != v {
			return slog.String(a.Key, h.scrub.Scrub(v))
		}
	}
	return a
}

func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		h.appendAttr(&b, h.group, a)
	}
	c := *h
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.scrubAttr(a)
	}
	c.next = h.next.WithAttrs(scrubbed)
	c.prefix = b.String()
	return &c
}

func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.group = h.group + name + "."
	return &c
}

// appendAttr writes a as the text handler does (key=value, groups dotted, values with
// spaces quoted), the value masked whole when the key names a secret.
func (h *Handler) appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			h.appendAttr(b, g, ga)
		}
		return
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(group + a.Key + "=")
	v := a.Value.String()
	if secretKey(a.Key) && v != "" {
		v = Mask
	}
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
