package pages

import (
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/viewport"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

// tableView is the state every table view keeps: the table, the text filter and the
// outcome of the last fetch.
type tableView struct {
	c      *common.Common
	w, h   int
	tbl    components.Table
	loaded bool
	err    error
	filt   string
}

func newTableView(c *common.Common, cols []components.Column) tableView {
	return tableView{c: c, tbl: components.NewTable(c.St, c.Km, cols)}
}

func (v *tableView) Filter() string { return v.filt }

func (v *tableView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.fitTable(w)
}

// fitTable gives the table tw columns of the view's width and its height less the head
// line.
func (v *tableView) fitTable(tw int) {
	v.tbl.SetSize(tw, max(3, v.h-1))
}

// withErr adds the last fetch's error to a view's head line.
func (v *tableView) withErr(head string) string {
	if v.err != nil {
		head += "  " + v.c.St.StatusErr.Render(common.DescribeErr(v.err))
	}
	return head
}

// orderTable is a table of orders with a detail pane that opens beside it, as the
// orders and dead-letter views show them.
type orderTable struct {
	tableView
	pane   viewport.Model
	all    []api.Order
	rows   []api.Order // all, less what the filter hides, in table order
	detail *api.Order
}

func newOrderTable(c *common.Common, cols []components.Column) orderTable {
	return orderTable{tableView: newTableView(c, cols), pane: viewport.New(40, 10)}
}

func (v *orderTable) Modal() bool { return v.detail != nil }

func (v *orderTable) SetSize(w, h int) {
	v.w, v.h = w, h
	tw := w
	if v.detail != nil {
		tw = w * 55 / 100
		v.pane.Width, v.pane.Height = w-tw-2, h
	}
	v.fitTable(tw)
}

// filterRows keeps in rows the orders the filter text matches.
func (v *orderTable) filterRows() {
	v.rows = v.rows[:0]
	for _, o := range v.all {
		if components.ContainsFold(orderSearchText(o), v.filt) {
			v.rows = append(v.rows, o)
		}
	}
}

// orderKey is an order's row key: the cursor follows the order, not the position.
func orderKey(id int64) string { return strconv.FormatInt(id, 10) }

// setRows shows rows in the table, cells making each line.
func (v *orderTable) setRows(cells func(o api.Order, now time.Time) []string) {
	now := v.c.Now()
	rows := make([]components.Row, len(v.rows))
	for i, o := range v.rows {
		rows[i] = components.Row{Key: orderKey(o.OrderID), Cells: cells(o, now)}
	}
	v.tbl.SetRows(rows)
}

// cursorOrder is the order under the table's cursor.
func (v *orderTable) cursorOrder() (api.Order, bool) {
	i := v.tbl.Cursor()
	if i < 0 || i >= len(v.rows) || v.tbl.Len() != len(v.rows) {
		return api.Order{}, false
	}
	return v.rows[i], true
}

func (v *orderTable) openDetail(o api.Order) {
	v.detail = &o
	v.SetSize(v.w, v.h)
	v.setDetail()
	v.pane.GotoTop()
}

func (v *orderTable) closeDetail() {
	v.detail = nil
	v.SetSize(v.w, v.h)
}

func (v *orderTable) setDetail() {
	v.pane.SetContent(orderDetail(v.c, *v.detail, v.pane.Width))
}

// redrawDetail redraws an open pane, as when the currency its price is shown in
// becomes known.
func (v *orderTable) redrawDetail() {
	if v.detail != nil {
		v.setDetail()
	}
}

// withPane puts the detail pane, when open, to the right of body.
func (v *orderTable) withPane(body string) string {
	if v.detail == nil {
		return body
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(v.tbl.Width()).Render(body), v.c.St.Pane.Render(v.pane.View()))
}
