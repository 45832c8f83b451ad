package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/tui/api"
)

const ordersPage = 200

type ordersMsg struct {
	status string
	page   api.OrderPage
	err    error
}

func (m ordersMsg) fetchErr() error { return m.err }

type orderDetailMsg struct {
	order api.Order
	err   error
}

func (m orderDetailMsg) fetchErr() error { return m.err }

var orderSorts = []struct {
	name string
	less func(a, b api.Order) int
}{
	{"newest", func(a, b api.Order) int { return cmpInt(b.OrderID, a.OrderID) }},
	{"oldest", func(a, b api.Order) int { return cmpInt(a.OrderID, b.OrderID) }},
	{"recently updated", func(a, b api.Order) int { return b.UpdatedAt.Compare(a.UpdatedAt) }},
	{"status", func(a, b api.Order) int { return strings.Compare(a.Status, b.Status) }},
	{"most attempts", func(a, b api.Order) int { return cmpInt(int64(b.Attempts), int64(a.Attempts)) }},
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// orders lists orders newest first, filtered by status (server side) and text
// (client side), with a detail pane showing an order's attempt history.
type orders struct {
	orderTable
	statusIx int // 0: all, else api.Statuses[statusIx-1]
	sortIx   int
	stale    bool
	lastLoad time.Time
}

var orderCols = []column{
	{"id", 6, 0, 0}, {"status", 13, 0, 0}, {"user", 6, 0, 4}, {"plan", 10, 1, 3}, {"region", 8, 1, 5},
	{"try", 3, 0, 0}, {"updated", 10, 0, 2}, {"error", 10, 3, 1},
}

func newOrders(c *common) *orders {
	return &orders{orderTable: newOrderTable(c, orderCols)}
}

func (v *orders) title() string { return "orders" }

func (v *orders) status() string {
	if v.statusIx == 0 {
		return ""
	}
	return api.Statuses[v.statusIx-1]
}

func (v *orders) refresh() tea.Cmd {
	d, ctx, status := v.c.d, v.c.ctx, v.status()
	v.stale = false
	v.lastLoad = v.c.now()
	return func() tea.Msg {
		p, err := d.Orders(ctx, status, ordersPage, 0)
		return ordersMsg{status: status, page: p, err: err}
	}
}

func (v *orders) keys() []key.Binding {
	km := v.c.km
	if v.detail != nil {
		return []key.Binding{km.Back, km.Up, km.Down, km.Cancel}
	}
	return []key.Binding{km.Up, km.Down, km.Detail, km.Status, km.Sort, km.Cancel}
}

func (v *orders) setFilter(s string) { v.filt = s; v.rebuild() }

func (v *orders) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ordersMsg:
		if msg.status != v.status() {
			return nil // an answer for a filter the operator has since changed
		}
		v.err = msg.err
		if msg.err == nil {
			v.all, v.loaded = msg.page.Orders, true
			v.rebuild()
		}
	case orderDetailMsg:
		if msg.err == nil && v.detail != nil && v.detail.OrderID == msg.order.OrderID {
			o := msg.order
			v.detail = &o
			v.setDetail()
		}
	case eventBatchMsg:
		return v.applyEvents(msg)
	}
	return nil
}

// applyEvents patches rows in place; an order we do not hold (new, or one that moved
// into the status being filtered) marks the list stale for a re-read, at most once a
// second however many events arrive.
func (v *orders) applyEvents(evs eventBatchMsg) tea.Cmd {
	changed := false
	for _, ev := range evs {
		if ev.Type != api.EventOrder {
			continue
		}
		e := ev.Order
		i := slices.IndexFunc(v.all, func(o api.Order) bool { return o.OrderID == e.OrderID })
		if i < 0 || (v.status() != "" && e.Status != v.status()) {
			v.stale = true
			continue
		}
		o := &v.all[i]
		o.Status, o.Attempts, o.UpdatedAt = e.Status, max(o.Attempts, e.Attempt), e.At
		o.WaitingRetry = e.Event == "retry_scheduled"
		if e.Error != "" {
			msg := e.Error
			o.ErrorMessage = &msg
		}
		changed = true
		if v.detail != nil && v.detail.OrderID == e.OrderID {
			v.detail.History = append(v.detail.History, api.HistoryEntry{At: e.At, Event: e.Event, Status: e.Status, Attempt: e.Attempt, Error: e.Error})
			v.detail.Status = e.Status
			v.setDetail()
		}
	}
	if changed {
		v.rebuild()
	}
	if v.stale && v.c.now().Sub(v.lastLoad) >= time.Second {
		return v.refresh()
	}
	return nil
}

func (v *orders) rebuild() {
	v.filterRows()
	slices.SortStableFunc(v.rows, orderSorts[v.sortIx].less)
	v.setRows(func(o api.Order, now time.Time) table.Row {
		status := o.Status
		if o.WaitingRetry {
			status += "↻"
		}
		return table.Row{
			strconv.FormatInt(o.OrderID, 10), status, strconv.FormatInt(o.UserID, 10), o.SpecID, o.Region,
			strconv.Itoa(o.Attempts), ago(now, o.UpdatedAt), oneLine(deref(o.ErrorMessage)),
		}
	})
}

func orderSearchText(o api.Order) string {
	return fmt.Sprintf("#%d %s %d %s %s %s %s %s", o.OrderID, o.Status, o.UserID, o.TelegramUserID, o.SpecID, o.Region, o.Provider, deref(o.ErrorMessage))
}

func (v *orders) handleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.km
	switch {
	case key.Matches(msg, km.Back) && v.detail != nil:
		v.closeDetail()
		return nil
	case key.Matches(msg, km.Detail):
		o, ok := v.cursorOrder()
		if !ok {
			return nil
		}
		v.openDetail(o)
		d, ctx := v.c.d, v.c.ctx
		return func() tea.Msg {
			full, err := d.Order(ctx, o.OrderID)
			return orderDetailMsg{order: full, err: err}
		}
	case key.Matches(msg, km.Status):
		v.statusIx = (v.statusIx + 1) % (len(api.Statuses) + 1)
		v.all, v.loaded = nil, false
		v.rebuild()
		return v.refresh()
	case key.Matches(msg, km.Sort):
		v.sortIx = (v.sortIx + 1) % len(orderSorts)
		v.rebuild()
		return nil
	case key.Matches(msg, km.Cancel):
		o, ok := v.cursorOrder()
		if v.detail != nil {
			o, ok = *v.detail, true
		}
		if !ok {
			return nil
		}
		d, ctx := v.c.d, v.c.ctx
		return askConfirm(fmt.Sprintf("Cancel order #%d (%s)?", o.OrderID, o.Status), func() tea.Msg {
			_, err := d.CancelOrder(ctx, o.OrderID)
			return actionDoneMsg{text: fmt.Sprintf("order #%d cancelled", o.OrderID), err: wrapAction(err, "cancel #%d", o.OrderID)}
		})
	}
	var cmd tea.Cmd
	if v.detail != nil && (key.Matches(msg, km.Up) || key.Matches(msg, km.Down)) {
		v.pane, cmd = v.pane.Update(msg)
		return cmd
	}
	v.tbl, cmd = v.tbl.Update(msg)
	return cmd
}

func wrapAction(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}

func (v *orders) render() string {
	st := v.c.st
	status := v.status()
	if status == "" {
		status = "all"
	}
	head := st.Label.Render("status ") + st.Value.Render(status) +
		st.Label.Render("  sort ") + st.Value.Render(orderSorts[v.sortIx].name) +
		st.Label.Render(fmt.Sprintf("  %d of %d shown", len(v.rows), len(v.all)))
	head = v.withErr(head)
	var body string
	switch {
	case !v.loaded && v.err == nil:
		body = loadingLine(v.c, "orders")
	case len(v.rows) == 0 && v.loaded:
		body = st.Muted.Render("no orders match")
	default:
		body = v.tbl.View()
	}
	return head + "\n" + v.withPane(body)
}
