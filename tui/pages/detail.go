package pages

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/tui/keymap"
)

// detailKey handles the two keys of a list's detail pane: esc closes an open pane,
// enter opens it on the cursor's item (when the list has one). relayout re-sizes the
// view for the pane's new state, fill writes the cursor's item into the pane. It
// reports whether msg was one of the two.
func detailKey(msg tea.KeyMsg, km keymap.KeyMap, open *bool, rows int, pane *viewport.Model, relayout, fill func()) bool {
	switch {
	case key.Matches(msg, km.Back) && *open:
		*open = false
		relayout()
		return true
	case key.Matches(msg, km.Detail):
		if rows > 0 {
			*open = true
			relayout()
			fill()
			pane.GotoTop()
		}
		return true
	}
	return false
}
