package pages

import (
	"fmt"
	"slices"
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

type visitorsMsg struct {
	visitors []api.VisitorPoint
	err      error
}

func (m visitorsMsg) FetchErr() error { return m.err }

// visitorsRead is how many of the visitor log's hits the map plots: all it keeps.
const visitorsRead = 3000

// countriesWidth is the top-countries pane beside the map: "KR  1,234 ██████".
const countriesWidth = 24

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
	// The visitor map, shown instead of the slugs while showMap is set.
	showMap  bool
	visitors []api.VisitorPoint
	vLoaded  bool
	vErr     error
	world    *components.WorldMap
}

var slugCols = []components.Column{{Title: "slug", Min: 12, Flex: 3}, {Title: "views", Min: 7, Fit: true}, {Title: "share", Min: 8, Flex: 1, Drop: 1}}

func NewBlog(c *common.Common) *blog {
	return &blog{c: c, tbl: components.NewTable(c.St, c.Km, slugCols)}
}

func (v *blog) Title() string      { return "blog" }
func (v *blog) Filter() string     { return v.filt }
func (v *blog) Modal() bool        { return false }
func (v *blog) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *blog) Keys() []key.Binding {
	if v.showMap {
		return []key.Binding{v.c.Km.Map}
	}
	return []key.Binding{v.c.Km.Up, v.c.Km.Down, v.c.Km.Map}
}

// Refresh reads the stats, and the visitor log while the map is shown: it is the
// largest answer the console asks for, so it is not read for a hidden map.
func (v *blog) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	stats := func() tea.Msg {
		s, err := d.BlogStats(ctx)
		return blogMsg{stats: s, err: err}
	}
	if !v.showMap {
		return stats
	}
	return tea.Batch(stats, v.fetchVisitors())
}

func (v *blog) fetchVisitors() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		vs, err := d.Visitors(ctx, visitorsRead)
		return visitorsMsg{visitors: vs, err: err}
	}
}

func (v *blog) SetSize(w, h int) {
	v.w, v.h = w, h
	// The days pane keeps its natural width; the slugs table takes the rest.
	v.tbl.SetSize(max(30, min(w*60/100, w-daysWidth-4)), max(3, h-3))
	v.rebuild()
}

func (v *blog) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case blogMsg:
		v.err = msg.err
		if msg.err == nil {
			v.stats, v.loaded = msg.stats, true
			v.rebuild()
		}
	case visitorsMsg:
		v.vErr = msg.err
		if msg.err == nil {
			v.visitors, v.vLoaded = msg.visitors, true
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
	if key.Matches(msg, v.c.Km.Map) {
		v.showMap = !v.showMap
		if v.showMap {
			return v.fetchVisitors()
		}
		return nil
	}
	if !v.showMap {
		v.tbl.Update(msg)
	}
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
	if v.showMap {
		return head + "\n\n" + v.renderMap()
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

// mapSize is the largest map that leaves room for the countries pane and fits the
// height, keeping the projection's shape.
func (v *blog) mapSize() (w, h int) {
	w = max(20, v.w-countriesWidth-3)
	room := max(4, v.h-4) // the head, a blank line, the legend
	for w > 20 && components.MapRows(w) > room {
		w--
	}
	return w, min(room, components.MapRows(w))
}

// renderMap draws where the visitor log's hits came from, with the top countries by
// hits beside it. Hits with no location (no geo headers, or 0,0) are counted apart.
func (v *blog) renderMap() string {
	st := v.c.St
	switch {
	case !v.vLoaded && v.vErr != nil:
		return st.StatusErr.Render(common.DescribeErr(v.vErr))
	case !v.vLoaded:
		return v.c.LoadingLine("visitors")
	}
	w, h := v.mapSize()
	if v.world == nil {
		v.world = components.NewWorldMap(w, h)
	} else if ww, wh := v.world.Size(); ww != w || wh != h {
		v.world = components.NewWorldMap(w, h)
	}
	var pts []components.GeoPoint
	byCountry := map[string]int{}
	unlocated := 0
	for _, p := range v.visitors {
		if p.Lat == 0 && p.Lon == 0 {
			unlocated++
		} else {
			pts = append(pts, components.GeoPoint{Lat: p.Lat, Lon: p.Lon})
		}
		c := p.Country
		if c == "" {
			c = "??"
		}
		byCountry[c]++
	}
	type cc struct {
		code string
		n    int
	}
	var top []cc
	for c, n := range byCountry {
		top = append(top, cc{c, n})
	}
	slices.SortFunc(top, func(a, b cc) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.code, b.code)
	})
	most := 1
	if len(top) > 0 {
		most = top[0].n
	}
	lines := []string{st.Title.Render("top countries")}
	for i, c := range top {
		if i >= h-1 {
			break
		}
		lines = append(lines, fmt.Sprintf("%-3s %6d %s", components.Truncate(c.code, 3), c.n, components.Bar(c.n, most, countriesWidth-12)))
	}
	if len(top) == 0 {
		lines = append(lines, st.Muted.Render("no visitors yet"))
	}
	legend := components.MapLegend(st) + st.Muted.Render(fmt.Sprintf(" · %d of %d hits located", len(pts), len(v.visitors)))
	if v.vErr != nil {
		legend += "  " + st.StatusErr.Render(common.DescribeErr(v.vErr))
	}
	legend = lipgloss.NewStyle().Width(w).Render(legend)
	return lipgloss.JoinHorizontal(lipgloss.Top, v.world.Render(st, pts)+"\n"+legend, " ", st.Pane.Render(strings.Join(lines, "\n")))
}
