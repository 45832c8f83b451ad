package tui_test

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
)

// TestViewsAtSizes renders every view at 80×24, the size a console must work at, and
// at a wide 200×50, as golden files; each frame must fit its terminal.
func TestViewsAtSizes(t *testing.T) {
	views := []struct {
		name  string
		view  string
		ready string
		keys  []string
		want  string
	}{
		{"overview", "", "", nil, ""},
		{"orders", "2", "6 of 6 shown", nil, ""},
		{"order_detail", "2", "6 of 6 shown", []string{"down", "down", "enter"}, "history"},
		{"dead_letters", "3", "plan sold out", nil, ""},
		{"rate_limits", "4", "LIMITED", nil, ""},
		{"blog", "5", "wish-ssh-tui", nil, ""},
		{"outbox", "6", "order received", nil, ""},
		{"terminate_prompt", "2", "6 of 6 shown", []string{"down", "down", "T"}, "(y/n)"},
		{"help", "3", "plan sold out", []string{"?"}, "previous view"},
	}
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				b := setup(t)
				b.tm.Send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				b.waitScreen(t, "queue depth")
				if v.view != "" {
					b.keys(v.view)
					b.waitScreen(t, v.ready)
				}
				if len(v.keys) > 0 {
					b.keys(v.keys...)
					b.waitScreen(t, v.want)
				}
				// ctrl+c, not q: q is ignored while a question is open.
				b.tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
				out := b.tm.FinalModel(t, teatest.WithFinalTimeout(waitFor)).View()
				lines := strings.Split(out, "\n")
				if len(lines) > size[1] {
					t.Errorf("%d lines for a %d-line terminal", len(lines), size[1])
				}
				for _, l := range lines {
					if w := lipgloss.Width(l); w > size[0] {
						t.Errorf("line of width %d > %d: %q", w, size[0], l)
					}
				}
				// Every tab keeps its number and the help line its end: nothing is cut.
				if !strings.Contains(lines[0], "6 outbox") {
					t.Errorf("tab bar lost its last tab: %q", lines[0])
				}
				if last := strings.TrimRight(lines[len(lines)-1], " "); v.name != "help" && !strings.HasSuffix(last, "q quit") {
					t.Errorf("help line does not end with quit: %q", last)
				}
				teatest.RequireEqualOutput(t, []byte(out))
			})
		}
	}
}
