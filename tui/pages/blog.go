package pages

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type blogMsg struct {
	stats api.BlogStats
	err   error
}

func (m blogMsg) FetchErr() error { return m.err }

// daysWidth is one line of the last days pane: "2026-11-29    312 views    97 visitors".
const daysWidth = 38

// blog shows today's views and visitors, the top slugs and the last days.
type blog struct {
	c      *common.Common
	w, h   int
	tbl    components.Table
	stats  api.BlogStats
	loaded bool
	err    error
	filt   string
}

var slugCols = []components.Column{{Title: "slug", Min: 12, Flex: 3}, {Title: "views", Min: 7, Fit: true}, {Title: "share", Min: 8, Flex: 1, Drop: 1}}

func NewBlog(c *common.Common) *blog {
	return &blog{c: c, tbl: components.NewTable(c.St, c.Km, slugCols)}
}

func (v *blog) Title() string       { return "blog" }
func (v *blog) Filter() string      { return v.filt }
func (v *blog) Modal() bool         { return false }
func (v *blog) SetFilter(s string)  { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *blog) Keys() []key.Binding { return []key.Binding{v.c.Km.Up, v.c.Km.Down} }

func (v *blog) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		s, err := d.BlogStats(ctx)
		return blogMsg{stats: s, err: err}
	}
}

func (v *blog) SetSize(w, h int) {
	v.w, v.h = w, h
	// The days pane keeps its natural width; the slugs table takes the rest.
	v.tbl.SetSize(max(30, min(w*60/100, w-daysWidth-4)), max(3, h-3))
	v.rebuild()
}

func (v *blog) Update(msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(blogMsg); ok {
		v.err = msg.err
		if msg.err == nil {
			v.stats, v.loaded = msg.stats, true
			v.rebuild()
		}
	}
	return nil
}

func (v *blog) rebuild() {
	var top int64
	for _, s := range v.stats.TopSlugs {
		top = max(top, s.Views)
	}
	var rows []components.Row
	var views []int64
	for _, s := range v.stats.TopSlugs {
		if !components.ContainsFold(s.Slug, v.filt) {
			continue
		}
		rows = append(rows, components.Row{Key: s.Slug, Cells: []string{s.Slug, strconv.FormatInt(s.Views, 10), ""}})
		views = append(views, s.Views)
	}
	v.tbl.SetRows(rows)
	// The bars are as wide as their column, known once the table has seen the rows.
	barW := v.tbl.Widths()[2]
	for i, r := range v.tbl.Rows() {
		r.Cells[2] = components.Bar(int(views[i]), int(max(top, 1)), barW)
	}
}

func (v *blog) HandleKey(msg tea.KeyMsg) tea.Cmd {
	v.tbl.Update(msg)
	return nil
}

func (v *blog) Render() string {
	st := v.c.St
	if !v.loaded {
		if v.err != nil {
			return st.StatusErr.Render(common.DescribeErr(v.err))
		}
		return v.c.LoadingLine("blog stats")
	}
	s := v.stats
	head := st.Label.Render("today ") + st.Value.Render(fmt.Sprintf("%d views", s.TodayViews)) +
		st.Label.Render(" · ") + st.Value.Render(fmt.Sprintf("%d visitors", s.TodayUniqueVisitors)) +
		st.Label.Render(fmt.Sprintf(" · %d views in total", s.TotalViews))
	if v.err != nil {
		head += "  " + st.StatusErr.Render(common.DescribeErr(v.err))
	}
	var days strings.Builder
	days.WriteString(st.Title.Render("last days") + "\n")
	for i, d := range s.Daily {
		if i >= max(1, v.h-3) {
			break
		}
		fmt.Fprintf(&days, "%s %6d views %5d visitors\n", d.Day, d.Views, d.UniqueVisitors)
	}
	if len(s.Daily) == 0 {
		days.WriteString(st.Muted.Render("no days yet"))
	}
	left := st.Title.Render("top slugs") + "\n" + v.tbl.View()
	if len(s.TopSlugs) == 0 {
		left = st.Title.Render("top slugs") + "\n" + st.Muted.Render("no views yet")
	}
	return head + "\n\n" + lipgloss.JoinHorizontal(lipgloss.Top,
		lipgloss.NewStyle().Width(v.tbl.Width()+2).Render(left),
		st.Pane.Render(strings.TrimRight(days.String(), "\n")))
}
