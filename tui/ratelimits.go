package tui

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/components"
)

type rateLimitsMsg struct {
	rl  api.RateLimits
	err error
}

func (m rateLimitsMsg) fetchErr() error { return m.err }

// nearShare is the share of the limit from which a user counts as "near" it.
const nearShare = 0.8

// rateLimits shows users' open message windows, busiest first, and resets one on
// confirmation, as the original operators did by deleting the user's KV key.
type rateLimits struct {
	tableView
	rl   api.RateLimits
	rows []api.RateWindow
}

var rateCols = []components.Column{
	{Title: "user", Min: 6, Flex: 1, Fit: true}, {Title: "count", Min: 7}, {Title: "window", Min: 12, Flex: 2, Drop: 1},
	{Title: "resets in", Min: 9, Drop: 2}, {Title: "state", Min: 8},
}

func newRateLimits(c *common) *rateLimits {
	return &rateLimits{tableView: newTableView(c, rateCols)}
}

func (v *rateLimits) title() string       { return "rate limits" }
func (v *rateLimits) modal() bool         { return false }
func (v *rateLimits) setFilter(s string)  { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *rateLimits) keys() []key.Binding { return []key.Binding{v.c.km.Up, v.c.km.Down, v.c.km.Reset} }

func (v *rateLimits) refresh() tea.Cmd {
	d, ctx := v.c.d, v.c.ctx
	return func() tea.Msg {
		rl, err := d.RateLimits(ctx, 1)
		return rateLimitsMsg{rl: rl, err: err}
	}
}

func (v *rateLimits) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case rateLimitsMsg:
		v.err = msg.err
		if msg.err == nil {
			v.rl, v.loaded = msg.rl, true
			v.rebuild()
		}
	case eventBatchMsg:
		changed := false
		for _, ev := range msg {
			if ev.Type != api.EventRateLimit {
				continue
			}
			e := ev.RateLimit
			changed = true
			if i := slices.IndexFunc(v.rl.Windows, func(w api.RateWindow) bool { return w.UserID == e.UserID }); i >= 0 {
				v.rl.Windows[i].Count, v.rl.Windows[i].Limited = e.Count, e.Limited
			} else {
				v.rl.Windows = append(v.rl.Windows, api.RateWindow{UserID: e.UserID, Count: e.Count, Limited: e.Limited})
			}
		}
		if changed {
			v.rebuild()
		}
	}
	return nil
}

func (v *rateLimits) state(w api.RateWindow) string {
	switch {
	case w.Limited || (v.rl.Limit > 0 && w.Count >= v.rl.Limit):
		return "LIMITED"
	case v.rl.Limit > 0 && float64(w.Count) >= nearShare*float64(v.rl.Limit):
		return "near"
	}
	return "ok"
}

func (v *rateLimits) rebuild() {
	v.rows = v.rows[:0]
	for _, w := range v.rl.Windows {
		if components.ContainsFold(fmt.Sprintf("%d %s", w.UserID, v.state(w)), v.filt) {
			v.rows = append(v.rows, w)
		}
	}
	slices.SortStableFunc(v.rows, func(a, b api.RateWindow) int { return b.Count - a.Count })
	now := v.c.now()
	rows := make([]components.Row, len(v.rows))
	for i, w := range v.rows {
		reset := "-"
		if !w.ResetAt.IsZero() {
			reset = components.HumanDuration(w.ResetAt.Sub(now))
		}
		id := strconv.FormatInt(w.UserID, 10)
		rows[i] = components.Row{Key: id, Cells: []string{id, fmt.Sprintf("%d/%d", w.Count, v.rl.Limit), "", reset, v.state(w)}}
	}
	v.tbl.SetRows(rows)
	v.drawBars()
}

func (v *rateLimits) handleKey(msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, v.c.km.Reset) {
		key, ok := v.tbl.SelectedKey()
		if !ok {
			return nil
		}
		user, _ := strconv.ParseInt(key, 10, 64)
		d, ctx := v.c.d, v.c.ctx
		return askConfirm(fmt.Sprintf("Reset the message window of user %d?", user), func() tea.Msg {
			_, err := d.ResetRateLimit(ctx, user)
			return actionDoneMsg{text: fmt.Sprintf("user %d's window reset", user), err: wrapAction(err, "reset user %d", user)}
		})
	}
	v.tbl.Update(msg)
	return nil
}

func (v *rateLimits) render() string {
	st := v.c.st
	limited, near := 0, 0
	for _, w := range v.rl.Windows {
		switch v.state(w) {
		case "LIMITED":
			limited++
		case "near":
			near++
		}
	}
	head := st.Label.Render(fmt.Sprintf("limit %d per %gs · %d open windows · ", v.rl.Limit, v.rl.WindowSeconds, len(v.rl.Windows)))
	head += st.Alarm.Render(fmt.Sprintf("%d limited", limited)) + st.Label.Render(" · ") + st.Warn.Render(fmt.Sprintf("%d near", near))
	head = v.withErr(head)
	switch {
	case !v.loaded && v.err == nil:
		return head + "\n" + loadingLine(v.c, "rate limits")
	case len(v.rows) == 0:
		return head + "\n" + st.Muted.Render("no open windows")
	}
	return head + "\n" + v.tbl.View()
}

// drawBars fills the window column once the table knows its width: the bar is as wide
// as the column, which depends on the other columns' content.
func (v *rateLimits) drawBars() {
	barW := max(4, v.tbl.Widths()[2])
	rows := v.tbl.Rows()
	for i, w := range v.rows {
		if i < len(rows) {
			rows[i].Cells[2] = components.Bar(w.Count, v.rl.Limit, barW)
		}
	}
}

func (v *rateLimits) setSize(w, h int) {
	v.tableView.setSize(w, h)
	v.drawBars()
}
