package components

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/styles"
)

var tabNames = []string{"overview", "orders", "dead letters", "rate limits", "blog", "outbox", "user", "comments", "logs",
	"reconciler", "broadcasts", "audit", "payments"}

// The bar fits whatever the width: the first ten keep their numbers, the active tab
// its whole name, and tabs past the tenth fold into a count once nothing else gives.
func TestTabsFit(t *testing.T) {
	st := styles.DefaultStyles(nil)
	for _, tc := range []struct {
		width, active int
		want          []string // in the bar, in this order
		not           []string
	}{
		{200, 0, []string{"1 overview", "3 dead letters", "0 reconciler", "broadcasts", "audit", "payments"}, []string{"+"}},
		{80, 0, []string{"1 overview", " 2 ", " 0 ", "broadcasts", "+2"}, []string{"audit", "payments"}},
		{70, 0, []string{"1 overview", " 9 ", " 0 ", "+3"}, []string{"broadcasts", "audit"}},
		{70, 11, []string{"1 ", " 0 ", "+1", "audit", "+1"}, []string{"broadcasts", "payments"}},
		{70, 12, []string{" 0 ", "+2", "payments"}, []string{"broadcasts", "audit"}},
		{70, 10, []string{" 0 ", "broadcasts", "+2"}, []string{"audit"}},
	} {
		bar := Tabs(st, "hangar", tabNames, tc.active, tc.width)
		if w := lipgloss.Width(bar); w > tc.width {
			t.Errorf("width %d, active %d: bar is %d wide: %q", tc.width, tc.active, w, bar)
		}
		rest := bar
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("width %d, active %d: %q missing (in order) from %q", tc.width, tc.active, w, bar)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, n := range tc.not {
			if strings.Contains(bar, n) {
				t.Errorf("width %d, active %d: %q in %q", tc.width, tc.active, n, bar)
			}
		}
		if !strings.Contains(bar, tabNames[tc.active]) {
			t.Errorf("active tab %q not named in full: %q", tabNames[tc.active], bar)
		}
	}
}
