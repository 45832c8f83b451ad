package pages

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type logsMsg struct {
	since uint64
	level string
	page  api.LogPage
	err   error
}

func (m logsMsg) FetchErr() error { return m.err }

type logsTickMsg struct{}

const (
	// logsEvery is how often the pane asks for new lines: the daemon keeps them in
	// memory and answers only those after the last one seen, so asking often is cheap.
	logsEvery = time.Second
	// logsKeep is how many lines the pane holds; older ones leave it.
	logsKeep = 1000
)

// logLevels are the level filter's steps; "" shows every level the daemon logs.
var logLevels = []string{"", "INFO", "WARN", "ERROR"}

// logs is the daemon's own log, newest first, live: the daemon masks secrets before
// it keeps a line (internal/logring). The cursor line is
// shown whole under the table, as a line is wider than a terminal.
type logs struct {
	tableView
	recs    []api.LogRecord // oldest first
	last    uint64
	levelIx int
	gap     bool
	ticking bool
}

var logCols = []components.Column{
	{Title: "time", Min: 8}, {Title: "level", Min: 5, Drop: 1}, {Title: "message", Min: 20, Flex: 1},
}

func NewLogs(c *common.Common) *logs { return &logs{tableView: newTableView(c, logCols)} }

func (v *logs) Title() string      { return "logs" }
func (v *logs) Modal() bool        { return false }
func (v *logs) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *logs) Keys() []key.Binding {
	return []key.Binding{v.c.Km.Up, v.c.Km.Down, v.c.Km.Level}
}

func (v *logs) level() string { return logLevels[v.levelIx] }

// Refresh asks for the lines after the last one held, and starts the pane's own clock.
func (v *logs) Refresh() tea.Cmd {
	d, ctx, since, level := v.c.D, v.c.Ctx, v.last, v.level()
	fetch := func() tea.Msg {
		p, err := d.Logs(ctx, since, level, logsKeep)
		return logsMsg{since: since, level: level, page: p, err: err}
	}
	if v.ticking {
		return fetch
	}
	v.ticking = true
	return tea.Batch(fetch, v.tick())
}

func (v *logs) tick() tea.Cmd {
	return tea.Tick(logsEvery, func(time.Time) tea.Msg { return logsTickMsg{} })
}

func (v *logs) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case logsTickMsg:
		v.ticking = false
		return v.Refresh()
	case logsMsg:
		if msg.level != v.level() {
			return nil // asked before the level changed
		}
		v.err = msg.err
		if msg.err != nil {
			return nil
		}
		v.loaded = true
		if msg.page.Last < v.last {
			// The daemon restarted and numbers from 1 again: start over.
			v.recs, v.last = nil, 0
		}
		if msg.page.Gap && msg.since == v.last {
			v.gap = true
		}
		for _, r := range msg.page.Records {
			if r.Seq > v.last {
				v.recs = append(v.recs, r)
				v.last = r.Seq
			}
		}
		v.last = max(v.last, msg.page.Last)
		if len(v.recs) > logsKeep {
			v.recs = v.recs[len(v.recs)-logsKeep:]
		}
		v.rebuild()
	}
	return nil
}

func logText(r api.LogRecord) string {
	t := components.OneLine(r.Msg)
	if r.Attrs != "" {
		t += "  " + components.OneLine(r.Attrs)
	}
	// Not masked again here: the daemon scrubbed the line before keeping it, and the
	// console's looser pattern would take words of ordinary lines ("no bot token:
	// Telegram…") for secrets.
	return t
}

func (v *logs) rebuild() {
	// At the top the pane follows the newest line; anywhere else it stays on its line.
	follow := v.tbl.Cursor() == 0
	rows := make([]components.Row, 0, len(v.recs))
	for i := len(v.recs) - 1; i >= 0; i-- {
		r := v.recs[i]
		text := logText(r)
		if !components.ContainsFold(r.Level+" "+text, v.filt) {
			continue
		}
		rows = append(rows, components.Row{Key: fmt.Sprint(r.Seq), Cells: []string{r.Time.UTC().Format("15:04:05"), r.Level, text}})
	}
	v.tbl.SetRows(rows)
	if follow {
		v.tbl.Top()
	}
}

func (v *logs) HandleKey(msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, v.c.Km.Level) {
		v.levelIx = (v.levelIx + 1) % len(logLevels)
		v.recs, v.last, v.gap, v.loaded = nil, 0, false, false
		v.rebuild()
		v.tbl.Top()
		d, ctx, level := v.c.D, v.c.Ctx, v.level()
		return func() tea.Msg {
			p, err := d.Logs(ctx, 0, level, logsKeep)
			return logsMsg{level: level, page: p, err: err}
		}
	}
	v.tbl.Update(msg)
	return nil
}

// selectedLine is the cursor's line in full, wrapped to the width, at most 3 lines.
func (v *logs) selectedLine() string {
	k, ok := v.tbl.SelectedKey()
	if !ok {
		return ""
	}
	for _, r := range v.recs {
		if fmt.Sprint(r.Seq) == k {
			full := r.Time.UTC().Format("2006-01-02 15:04:05") + " " + r.Level + " " + logText(r)
			lines := strings.Split(lipgloss.NewStyle().Width(v.w).Render(full), "\n")
			return strings.Join(lines[:min(3, len(lines))], "\n")
		}
	}
	return ""
}

func (v *logs) SetSize(w, h int) {
	v.w, v.h = w, h
	// Room for the head line and the cursor line shown whole below the table.
	v.tbl.SetSize(w, max(3, h-1-4))
}

func (v *logs) Render() string {
	st := v.c.St
	level := v.level()
	if level == "" {
		level = "all"
	} else {
		level += " and above"
	}
	head := st.Label.Render("daemon log · level ") + st.Value.Render(level) +
		st.Label.Render(fmt.Sprintf(" · %d lines · live", len(v.tbl.Rows())))
	if v.gap {
		head += st.Warn.Render(" · older lines dropped")
	}
	head = v.withErr(head)
	switch {
	case !v.loaded && v.err == nil:
		return head + "\n" + v.c.LoadingLine("log lines")
	case len(v.tbl.Rows()) == 0:
		return head + "\n" + st.Muted.Render("no log lines")
	}
	return head + "\n" + v.tbl.View() + "\n\n" + st.Muted.Render(v.selectedLine())
}
