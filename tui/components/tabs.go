package components

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/styles"
)

// Tabs draws the tab bar in width cells. Every one of the first ten tabs keeps its
// number, the key that jumps to it (0 for the tenth); tabs past the tenth have no
// key (tab and shift+tab reach them) and show their name. While the bar is too wide,
// the longest inactive name of several words shortens to its first word, then
// inactive names among the first ten give way to their numbers alone from the last,
// then inactive tabs past the tenth fold, from the last, into a "+N" that counts
// them. The active tab is always named in full. Nothing is cut inside a word.
func Tabs(st styles.Styles, title string, names []string, active, width int) string {
	labels := make([]string, len(names))
	copy(labels, names)
	folded := make([]bool, len(names))
	render := func() string {
		parts := []string{st.Title.Render(title)}
		hidden := 0
		flush := func() {
			if hidden > 0 {
				parts = append(parts, st.Tab.Render("+"+strconv.Itoa(hidden)))
				hidden = 0
			}
		}
		for i, l := range labels {
			if folded[i] {
				hidden++
				continue
			}
			flush()
			label := strconv.Itoa((i + 1) % 10) // the tenth tab is 0, its key
			switch {
			case i >= 10:
				label = l
			case l != "":
				label += " " + l
			}
			if i == active {
				parts = append(parts, st.ActiveTab.Render(label))
			} else {
				parts = append(parts, st.Tab.Render(label))
			}
		}
		flush()
		return strings.Join(parts, " ")
	}
	line := render()
	for lipgloss.Width(line) > width {
		if !shorten(labels, folded, active) {
			break
		}
		line = render()
	}
	return line
}

// shorten takes one step: the longest inactive label of several words to its first
// word, else the last of the first ten inactive labels still named to nothing, else
// the last inactive tab past the tenth folded away.
func shorten(labels []string, folded []bool, active int) bool {
	longest := -1
	for i, l := range labels {
		if i != active && !folded[i] && strings.Contains(l, " ") && (longest < 0 || len(l) > len(labels[longest])) {
			longest = i
		}
	}
	if longest >= 0 {
		labels[longest] = strings.Fields(labels[longest])[0]
		return true
	}
	for i := min(len(labels), 10) - 1; i >= 0; i-- {
		if i != active && labels[i] != "" {
			labels[i] = ""
			return true
		}
	}
	for i := len(labels) - 1; i >= 10; i-- {
		if i != active && !folded[i] {
			folded[i] = true
			return true
		}
	}
	return false
}
