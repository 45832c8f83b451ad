package tui

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/hangarhq/hangar/http/api"
)

func targetSuffix(t string) string {
	if t == "" {
		return ""
	}
	return " at " + t
}

func (m *Model) header() string {
	st := m.c.st
	tabs := []string{st.Title.Render("hangar")}
	for i, v := range m.views {
		label := fmt.Sprintf("%d %s", i+1, v.title())
		if i == m.active {
			tabs = append(tabs, st.ActiveTab.Render(label))
		} else {
			tabs = append(tabs, st.Tab.Render(label))
		}
	}
	line := strings.Join(tabs, " ")
	if m.dropped > 0 {
		line += st.Muted.Render(fmt.Sprintf("  (%d events skipped)", m.dropped))
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
	if d := retry.Sub(m.c.now()); d > 0 {
		wait = fmt.Sprintf("reconnecting in %ds", int(math.Ceil(d.Seconds())))
	}
	return fmt.Sprintf("%s: %s — %s", what, describeErr(err), wait)
}

func (m *Model) banner(text string) string {
	return m.c.st.Banner.Width(m.c.width).Render(text)
}

func (m *Model) footer() string {
	st := m.c.st
	var line string
	switch {
	case m.confirm != nil:
		line = st.Confirm.Render(m.confirm.prompt + " (y/n)")
	case m.filtering:
		line = m.filterInput.View()
	case m.activeView().filter() != "":
		line = st.Filter.Render("filter: "+m.activeView().filter()) + st.Muted.Render("  (esc clears)")
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
	return line + "\n" + m.help.View(helpKeys{m})
}

// helpKeys adapts the active view's keys and the global ones to bubbles/help.
type helpKeys struct{ m *Model }

// shortKeyer is a view whose one-line help is a shorter list than its full help.
type shortKeyer interface{ shortKeys() []key.Binding }

func (h helpKeys) ShortHelp() []key.Binding {
	keys := h.m.activeView().keys()
	if s, ok := h.m.activeView().(shortKeyer); ok {
		keys = s.shortKeys()
	}
	return append(keys, h.m.c.km.Help, h.m.c.km.Quit)
}

func (h helpKeys) FullHelp() [][]key.Binding {
	km := h.m.c.km
	return [][]key.Binding{h.m.activeView().keys(), {km.NextView, km.PrevView, km.Jump}, {km.Filter, km.Refresh, km.Help, km.Quit}}
}
