package tui

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

func targetSuffix(t string) string {
	if t == "" {
		return ""
	}
	return " at " + t
}

// header is the tab bar: it fits the width by shortening names, never by cutting one.
func (m *Model) header() string {
	st := m.c.St
	names := make([]string, len(m.views))
	for i, v := range m.views {
		names[i] = v.Title()
	}
	// A viewer's console says so on every screen, before the tabs get the width.
	var role string
	if m.c.ReadOnly() {
		role = st.Warn.Render(" viewer: read-only")
	}
	line := components.Tabs(st, "hangar", names, m.active, m.c.Width-lipgloss.Width(role)) + role
	if m.dropped > 0 {
		if skipped := st.Muted.Render(fmt.Sprintf("  (%d events skipped)", m.dropped)); lipgloss.Width(line+skipped) <= m.c.Width {
			line += skipped
		}
	}
	return line
}

// bannerText is non-empty while the daemon cannot be reached (or refuses us).
func (m *Model) bannerText() string {
	var err error
	var retry time.Time
	switch {
	case m.feedConn != nil && !m.feedConn.Connected:
		err, retry = errors.New(m.feedConn.Err), m.feedConn.RetryAt
	case m.feedErr != nil:
		err, retry = m.feedErr, m.nextPoll
	}
	if m.restErr != nil {
		var ae *api.Error
		if errors.As(m.restErr, &ae) || err == nil {
			err = m.restErr
			if retry.IsZero() {
				retry = m.nextPoll
			}
		}
	}
	if err == nil {
		return ""
	}
	what := "daemon unreachable" + targetSuffix(m.target)
	var ae *api.Error
	if errors.As(err, &ae) {
		what = "daemon refused the console" + targetSuffix(m.target)
	}
	wait := "reconnecting…"
	if d := retry.Sub(m.c.Now()); d > 0 {
		wait = fmt.Sprintf("reconnecting in %ds", int(math.Ceil(d.Seconds())))
	}
	return fmt.Sprintf("%s: %s — %s", what, common.DescribeErr(err), wait)
}

func (m *Model) banner(text string) string {
	return m.c.St.Banner.Width(m.c.Width).Render(text)
}

func (m *Model) footer() string {
	st := m.c.St
	var line string
	switch {
	case m.confirm != nil:
		line = st.Confirm.Render(m.confirm.Prompt + " (y/n)")
	case m.filtering:
		line = m.filterInput.View()
	case m.activeView().Filter() != "":
		line = st.Filter.Render("filter: "+m.activeView().Filter()) + st.Muted.Render("  (esc clears)")
	}
	if m.status != "" && m.confirm == nil {
		s := st.Status
		if m.statusErr {
			s = st.StatusErr
		}
		if line != "" {
			line += "  "
		}
		line += s.Render(m.status)
	}
	if line != "" {
		// Wrapped, not cut: a question's end ("(y/n)") must stay on screen.
		line = lipgloss.NewStyle().Width(m.c.Width).Render(line)
	}
	return line + "\n" + m.helpLine()
}

// helpLine is the one-line help, or the full help when toggled. The one line keeps
// whole entries only and always ends with help and quit: bubbles/help cuts the line
// at the width, which took "? help" itself off a narrow terminal.
func (m *Model) helpLine() string {
	if m.help.ShowAll {
		return m.help.View(helpKeys{m})
	}
	st := m.c.St
	item := func(b key.Binding) string {
		return st.Title.Render(b.Help().Key) + " " + st.Muted.Render(b.Help().Desc)
	}
	sep := st.Muted.Render(" • ")
	keys := helpKeys{m}.ShortHelp()
	view, tail := keys[:len(keys)-2], keys[len(keys)-2:]
	tailText := item(tail[0]) + sep + item(tail[1])
	var parts []string
	for _, b := range view {
		if !b.Enabled() {
			continue
		}
		next := strings.Join(append(parts, item(b)), sep) + sep + tailText
		if lipgloss.Width(next) > m.c.Width {
			break
		}
		parts = append(parts, item(b))
	}
	return strings.Join(append(parts, tailText), sep)
}

// helpKeys adapts the active view's keys and the global ones to bubbles/help.
type helpKeys struct{ m *Model }

// shortKeyer is a view whose one-line help is a shorter list than its full help.

func (h helpKeys) ShortHelp() []key.Binding {
	keys := h.m.activeView().Keys()
	if s, ok := h.m.activeView().(common.ShortKeyer); ok {
		keys = s.ShortKeys()
	}
	return append(keys, h.m.c.Km.Help, h.m.c.Km.Quit)
}

func (h helpKeys) FullHelp() [][]key.Binding {
	km := h.m.c.Km
	return [][]key.Binding{h.m.activeView().Keys(), {km.NextView, km.PrevView, km.Jump}, {km.Filter, km.Refresh, km.Help, km.Quit}}
}
