package tui_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
)

// lastTabFolded is a tab bar ending in the count of the tabs folded away.
var lastTabFolded = regexp.MustCompile(` \+\d+$`)

// TestViewsAtSizes renders every view at 80×24, the size a console must work at, and
// at a wide 200×50, as golden files; each frame must fit its terminal.
func TestViewsAtSizes(t *testing.T) {
	views := []struct {
		name  string
		view  string
		ready string
		keys  []string
		want  string
		// then are keys sent once want is on screen, and thenWant what they bring.
		then     []string
		thenWant string
	}{
		{"overview", "", "", nil, "", nil, ""},
		{"orders", "2", "6 of 6 shown", nil, "", nil, ""},
		{"order_detail", "2", "6 of 6 shown", []string{"down", "down", "enter"}, "history", nil, ""},
		{"dead_letters", "3", "plan sold out", nil, "", nil, ""},
		{"rate_limits", "4", "LIMITED", nil, "", nil, ""},
		{"blog", "5", "wish-ssh-tui", nil, "", nil, ""},
		{"outbox", "6", "order received", nil, "", nil, ""},
		{"terminate_prompt", "2", "6 of 6 shown", []string{"down", "down", "T"}, "(y/n)", nil, ""},
		{"help", "3", "plan sold out", []string{"?"}, "previous view", nil, ""},
		{"user", "2", "6 of 6 shown", []string{"enter", "u"}, "ledger (4)", nil, ""},
		{"deposit_prompt", "2", "6 of 6 shown", []string{"u"}, "ledger (4)", []string{"d", "5000", "enter"}, "(y/n)"},
		{"comments", "8", "cheap pills", nil, "", nil, ""},
		{"comment_detail", "8", "cheap pills", []string{"down", "enter"}, "comment #13", nil, ""},
		{"inquiries", "8", "cheap pills", []string{"i"}, "RSS feed", nil, ""},
		{"logs", "9", "order dead-lettered", nil, "", nil, ""},
		{"reconciler", "0", "60123457", nil, "", nil, ""},
		{"reconcile_prompt", "0", "60123457", []string{"r"}, "(y/n)", nil, ""},
		{"blog_map", "5", "wish-ssh-tui", []string{"v"}, "top countries", nil, ""},
		{"audit", "shift+tab", "refused: viewer", nil, "", nil, ""},
		{"pause_prompt", "", "", []string{"p"}, "(y/n)", nil, ""},
		{"outbox_detail", "6", "order received", []string{"down", "down", "down", "down", "enter"}, "oc:9f86d081884c7d65", nil, ""},
		{"broadcasts", "0", "60123457", []string{"tab"}, "1 under way", nil, ""},
		{"broadcast_detail", "0", "60123457", []string{"tab"}, "1 under way", []string{"enter"}, "broadcast #3"},
		{"broadcast_compose", "0", "60123457", []string{"tab"}, "1 under way", []string{"n", "Hello", "enter", "세계"}, "8/4096 characters"},
		{"broadcast_preview", "0", "60123457", []string{"tab"}, "1 under way",
			[]string{"n", "Hello everyone: the Seoul region is back.", "enter", "Orders placed during the outage were kept and are being created now.", "ctrl+s"}, "(y/n)"},
		{"broadcast_cancel_prompt", "0", "60123457", []string{"tab"}, "1 under way", []string{"c"}, "(y/n)"},
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
				if len(v.then) > 0 {
					b.keys(v.then...)
					b.waitScreen(t, v.thenWant)
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
				// Every tab keeps its number and the help line its end: nothing is cut. The
				// last tab is named, or counted in the "+N" of the tabs past the tenth.
				if tabs := strings.TrimSuffix(strings.TrimRight(lines[0], " "), " viewer: read-only"); !strings.HasSuffix(tabs, " audit") && !lastTabFolded.MatchString(tabs) {
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
