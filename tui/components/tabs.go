package components

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/tui/styles"
)

// Tabs draws the tab bar in width cells. Every tab keeps its number, the key that
// jumps to it (0 for the tenth); tabs past the tenth have none and keep their name. While the bar is too wide, the longest inactive name of several words
// shortens to its first word, then inactive names give way to their numbers alone from
// the last; the active tab is always named in full. Nothing is cut inside a word.
func Tabs(st styles.Styles, title string, names []string, active, width int) string {
	labels := make([]string, len(names))
	for i, n := range names {
		labels[i] = n
	}
	render := func() string {
		parts := []string{st.Title.Render(title)}
		for i, l := range labels {
			label := strconv.Itoa((i + 1) % 10) // the tenth tab is 0, its key
			switch {
			case i >= 10:
				label = l // no digit left to jump to it: tab and shift+tab reach it
			case l != "":
				label += " " + l
			}
			if i == active {
				parts = append(parts, st.ActiveTab.Render(label))
			} else {
				parts = append(parts, st.Tab.Render(label))
			}
		}
		return strings.Join(parts, " ")
	}
	line := render()
	for lipgloss.Width(line) > width {
		if !shorten(labels, active) {
			break
		}
		line = render()
	}
	return line
}

// shorten takes one step: the longest inactive label of several words to its first
// word, else the last inactive label still named to nothing.
func shorten(labels []string, active int) bool {
	longest := -1
	for i, l := range labels {
		if i != active && strings.Contains(l, " ") && (longest < 0 || len(l) > len(labels[longest])) {
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
	return false
}
