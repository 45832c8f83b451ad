package pages

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type rateLimitsMsg struct {
	rl  api.RateLimits
	err error
}

func (m rateLimitsMsg) FetchErr() error { return m.err }

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

func NewRateLimits(c *common.Common) *rateLimits {
	return &rateLimits{tableView: newTableView(c, rateCols)}
}

func (v *rateLimits) Title() string       { return "rate limits" }
func (v *rateLimits) Modal() bool         { return false }
func (v *rateLimits) SetFilter(s string)  { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *rateLimits) Keys() []key.Binding { return []key.Binding{v.c.Km.Up, v.c.Km.Down, v.c.Km.Reset} }

func (v *rateLimits) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		rl, err := d.RateLimits(ctx, 1)
		return rateLimitsMsg{rl: rl, err: err}
	}
}

func (v *rateLimits) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case rateLimitsMsg:
		v.err = msg.err
		if msg.err == nil {
			v.rl, v.loaded = msg.rl, true
			v.rebuild()
		}
	case common.EventBatchMsg:
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
	now := v.c.Now()
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

func (v *rateLimits) HandleKey(msg tea.KeyMsg) tea.Cmd {
	if key.Matches(msg, v.c.Km.Reset) {
		key, ok := v.tbl.SelectedKey()
		if !ok {
			return nil
		}
		user, _ := strconv.ParseInt(key, 10, 64)
		d, ctx := v.c.D, v.c.Ctx
		return common.AskConfirm(fmt.Sprintf("Reset the message window of user %d?", user), func() tea.Msg {
			_, err := d.ResetRateLimit(ctx, user)
			return common.ActionDoneMsg{Text: fmt.Sprintf("user %d's window reset", user), Err: common.WrapAction(err, "reset user %d", user)}
		})
	}
	v.tbl.Update(msg)
	return nil
}

func (v *rateLimits) Render() string {
	st := v.c.St
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
		return head + "\n" + v.c.LoadingLine("rate limits")
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

func (v *rateLimits) SetSize(w, h int) {
	v.tableView.SetSize(w, h)
	v.drawBars()
}
