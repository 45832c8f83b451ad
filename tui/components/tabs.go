package components

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/styles"
)

// Tabs draws the tab bar in width cells. Every tab keeps its number, the key that
// jumps to it; when the full names do not fit, names shorten to their first word and
// then inactive tabs to their number alone, the active tab always named in full.
// Nothing is cut inside a word.
func Tabs(st styles.Styles, title string, names []string, active, width int) string {
	for level := 0; level < 3; level++ {
		parts := []string{st.Title.Render(title)}
		for i, n := range names {
			label := strconv.Itoa(i + 1)
			switch {
			case i == active || level == 0:
				label += " " + n
			case level == 1:
				label += " " + strings.Fields(n)[0]
			}
			if i == active {
				parts = append(parts, st.ActiveTab.Render(label))
			} else {
				parts = append(parts, st.Tab.Render(label))
			}
		}
		line := strings.Join(parts, " ")
		if lipgloss.Width(line) <= width || level == 2 {
			return line
		}
	}
	return ""
}
