package components

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
)

// Ago says how long before now t was, "-" for a zero time.
func Ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return HumanDuration(now.Sub(t)) + " ago"
}

// HumanDuration is a duration in at most two units, short enough for a table cell.
func HumanDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// Deref is *s, or "" for nil: the admin API's optional fields.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// secretRE finds values that look like credentials. The daemon masks root passwords
// before storing messages; this is a second line in case a message slipped through.
var secretRE = regexp.MustCompile(`(?i)((?:root[ _-]?)?(?:(?:password|passwd|pass|pwd|secret|token)\b|비밀번호)\s*[:=]?\s*)([^\s•:=]\S*)`)

// Mask is what a secret is replaced with on screen.
const Mask = "••••••••"

// MaskSecrets hides anything that looks like a password or token.
func MaskSecrets(s string) string { return secretRE.ReplaceAllString(s, "${1}"+Mask) }

// OneLine folds s's whitespace, newlines included, to single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ContainsFold reports whether hay contains needle, ignoring case; "" matches all.
func ContainsFold(hay, needle string) bool {
	return needle == "" || strings.Contains(strings.ToLower(hay), strings.ToLower(needle))
}

// Truncate shortens s to w cells, ending in "…". It cuts at the last space when one
// falls in the second half of the room, so no word is left in pieces; a single long
// word (an id, an address) is cut where it must be.
func Truncate(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r))+1 > w {
		r = r[:len(r)-1]
	}
	cut := string(r)
	if strings.HasPrefix(s[len(cut):], " ") {
		return strings.TrimRight(cut, " ·,;:-") + "…" // the cut falls between two words
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 && lipgloss.Width(cut[:i]) >= w/2 {
		return strings.TrimRight(cut[:i], " ·,;:-") + "…"
	}
	return cut + "…"
}
