package pages

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

// ordersPage is how many orders one page of the orders view holds.
const ordersPage = 200

// ordersMsg answers one page load: the page of status whose orders are all below
// before (0: the newest page). more says an older page exists.
type ordersMsg struct {
	status string
	before int64
	orders []api.Order
	more   bool
	err    error
}

func (m ordersMsg) FetchErr() error { return m.err }

type orderDetailMsg struct {
	order api.Order
	err   error
}

func (m orderDetailMsg) FetchErr() error { return m.err }

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

// orders lists orders newest first, a page at a time, filtered by status (server
// side) and text (client side), with a detail pane showing an order's attempt history.
//
// Pages are cut by the daemon's before cursor (an order id: the page holds the orders
// below it). cursors is the stack of the pages walked so far, the shown one on top;
// going back pops it, so a page comes back as it was cut even after new orders have
// arrived on the first one.
type orders struct {
	orderTable
	statusIx int // 0: all, else api.Statuses[statusIx-1]
	sortIx   int
	stale    bool
	lastLoad time.Time
	cursors  []int64 // cursors[0] is 0, the newest page
	more     bool    // the shown page is not the last
	// terminating holds the orders whose termination the operator confirmed and the
	// daemon has not answered yet: their rows say so, and T is not offered twice.
	terminating map[int64]bool
}

// terminateStartedMsg says the operator confirmed the termination of an order; the
// common.ActionDoneMsg naming the order ends it.
type terminateStartedMsg struct{ id int64 }

// orderCols give way right to left by Drop at narrow widths: region first, the error
// text last, as an operator scanning for trouble needs it most.
var orderCols = []components.Column{
	{Title: "id", Min: 4, Fit: true}, {Title: "status", Min: 12}, {Title: "user", Min: 4, Drop: 4, Fit: true},
	{Title: "plan", Min: 8, Flex: 1, Drop: 3}, {Title: "region", Min: 6, Flex: 1, Drop: 5},
	{Title: "try", Min: 3}, {Title: "updated", Min: 9, Drop: 2}, {Title: "error", Min: 10, Flex: 3, Drop: 1},
}

func NewOrders(c *common.Common) *orders {
	return &orders{orderTable: newOrderTable(c, orderCols), cursors: []int64{0}, terminating: map[int64]bool{}}
}

func (v *orders) Title() string { return "orders" }

func (v *orders) status() string {
	if v.statusIx == 0 {
		return ""
	}
	return api.Statuses[v.statusIx-1]
}

// before is the cursor of the shown page.
func (v *orders) before() int64 { return v.cursors[len(v.cursors)-1] }

// pageIndex is the shown page's place, 0 for the newest.
func (v *orders) pageIndex() int { return len(v.cursors) - 1 }

// refresh re-reads the shown page. It asks for one order more than a page: the
// daemon's next_before only says that a page came back full, so a list of exactly
// ordersPage orders would otherwise offer an empty page after it.
func (v *orders) Refresh() tea.Cmd {
	d, ctx, status, before := v.c.D, v.c.Ctx, v.status(), v.before()
	v.stale = false
	v.lastLoad = v.c.Now()
	return func() tea.Msg {
		p, err := d.Orders(ctx, status, ordersPage+1, before)
		msg := ordersMsg{status: status, before: before, orders: p.Orders, err: err}
		if len(msg.orders) > ordersPage {
			msg.orders, msg.more = msg.orders[:ordersPage], true
		}
		return msg
	}
}

// turnPage shows the page below cursor (after pushing or popping it) once it loads.
func (v *orders) turnPage() tea.Cmd {
	v.all, v.loaded, v.more, v.err = nil, false, false, nil
	if v.detail != nil {
		v.closeDetail()
	}
	v.rebuild()
	v.tbl.Top()
	return v.Refresh()
}

func (v *orders) Keys() []key.Binding {
	km := v.c.Km
	if v.detail != nil {
		return []key.Binding{km.Back, km.Up, km.Down, km.User, km.Cancel, km.Terminate}
	}
	return []key.Binding{km.Up, km.Down, km.Detail, km.Status, km.Sort, km.NextPage, km.PrevPage, km.User, km.Cancel, km.Terminate}
}

// shortKeys leaves the arrows and the page keys to the full help (the head line names
// the page keys that apply), so the actions fit one line of a 100-column terminal.
func (v *orders) ShortKeys() []key.Binding {
	km := v.c.Km
	if v.detail != nil {
		return v.Keys()
	}
	return []key.Binding{km.Detail, km.Status, km.Sort, km.Cancel, km.Terminate}
}

func (v *orders) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }

func (v *orders) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ordersMsg:
		if msg.status != v.status() || msg.before != v.before() {
			return nil // an answer for a filter or page the operator has since left
		}
		v.err = msg.err
		if msg.err == nil {
			v.all, v.more, v.loaded = msg.orders, msg.more, true
			v.rebuild()
		}
	case common.PlansMsg:
		v.redrawDetail()
	case orderDetailMsg:
		if msg.err == nil && v.detail != nil && v.detail.OrderID == msg.order.OrderID {
			o := msg.order
			v.detail = &o
			v.setDetail()
		}
	case terminateStartedMsg:
		v.terminating[msg.id] = true
		v.rebuild()
	case common.ActionDoneMsg:
		if v.terminating[msg.OrderID] {
			delete(v.terminating, msg.OrderID)
			v.rebuild()
		}
		if msg.Err == nil && msg.Order != nil {
			v.patch(*msg.Order)
		}
	case common.EventBatchMsg:
		return v.applyEvents(msg)
	}
	return nil
}

// fetchDetail reads one order whole for the detail pane.
func (v *orders) fetchDetail(id int64) tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		full, err := d.Order(ctx, id)
		return orderDetailMsg{order: full, err: err}
	}
}

// patch shows o, as the daemon just answered it, in its row and the detail pane until
// the re-read comes back. An order that left the status being filtered leaves the list.
func (v *orders) patch(o api.Order) {
	if i := slices.IndexFunc(v.all, func(x api.Order) bool { return x.OrderID == o.OrderID }); i >= 0 {
		if v.status() != "" && o.Status != v.status() {
			v.all = slices.Delete(v.all, i, i+1)
		} else {
			v.all[i] = o
		}
		v.rebuild()
	}
	if v.detail != nil && v.detail.OrderID == o.OrderID {
		v.detail = &o
		v.setDetail()
	}
}

// onOtherPage reports whether an order we do not hold belongs to another page than the
// shown one, going by id: those pages are cut by id, whatever the filter.
func (v *orders) onOtherPage(id int64) bool {
	if b := v.before(); b > 0 && id >= b {
		return true
	}
	return v.more && len(v.all) > 0 && id < v.all[len(v.all)-1].OrderID
}

// applyEvents patches rows in place; an order we do not hold (new, or one that moved
// into the status being filtered) marks the list stale for a re-read, at most once a
// second however many events arrive.
func (v *orders) applyEvents(evs common.EventBatchMsg) tea.Cmd {
	changed, detailEvent := false, false
	for _, ev := range evs {
		if ev.Type != api.EventOrder {
			continue
		}
		e := ev.Order
		if v.detail != nil && v.detail.OrderID == e.OrderID {
			v.detail.History = append(v.detail.History, api.HistoryEntry{At: e.At, Event: e.Event, Status: e.Status, Attempt: e.Attempt, Error: e.Error})
			v.detail.Status = e.Status
			v.setDetail()
			detailEvent = true
		}
		i := slices.IndexFunc(v.all, func(o api.Order) bool { return o.OrderID == e.OrderID })
		if i < 0 && v.onOtherPage(e.OrderID) {
			continue // a newer page's order, or an older one's: not on screen either way
		}
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
	}
	if changed {
		v.rebuild()
	}
	var refetch tea.Cmd
	if detailEvent {
		// An event carries the status and the step, not what the step changed (a
		// suspension's grace and power, a renewal's period): the pane reads the order
		// again, or it kept the period and times from when it was opened.
		refetch = v.fetchDetail(v.detail.OrderID)
	}
	if v.stale && v.c.Now().Sub(v.lastLoad) >= time.Second {
		return tea.Batch(refetch, v.Refresh())
	}
	return refetch
}

func (v *orders) rebuild() {
	v.filterRows()
	slices.SortStableFunc(v.rows, orderSorts[v.sortIx].less)
	v.setRows(func(o api.Order, now time.Time) []string {
		status := o.Status
		if o.WaitingRetry {
			status += "↻"
		}
		if v.terminating[o.OrderID] {
			status = "terminating…"
		}
		return []string{
			strconv.FormatInt(o.OrderID, 10), status, strconv.FormatInt(o.UserID, 10), o.SpecID, o.Region,
			strconv.Itoa(o.Attempts), components.Ago(now, o.UpdatedAt), components.OneLine(components.Deref(o.ErrorMessage)),
		}
	})
}

func orderSearchText(o api.Order) string {
	return fmt.Sprintf("#%d %s %d %s %s %s %s %s", o.OrderID, o.Status, o.UserID, o.TelegramUserID, o.SpecID, o.Region, o.Provider, components.Deref(o.ErrorMessage))
}

func (v *orders) HandleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.Km
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
		return v.fetchDetail(o.OrderID)
	case key.Matches(msg, km.Status):
		// Cursors cut for one status mean nothing for another: start from the newest.
		v.statusIx = (v.statusIx + 1) % (len(api.Statuses) + 1)
		v.cursors = v.cursors[:1]
		return v.turnPage()
	case key.Matches(msg, km.NextPage):
		switch {
		case !v.loaded:
			return nil
		case !v.more:
			return common.Notice(false, "no older orders: this is the last page")
		}
		v.cursors = append(v.cursors, v.all[len(v.all)-1].OrderID)
		return v.turnPage()
	case key.Matches(msg, km.PrevPage):
		if v.pageIndex() == 0 {
			return common.Notice(false, "no newer orders: this is the first page")
		}
		v.cursors = v.cursors[:len(v.cursors)-1]
		return v.turnPage()
	case key.Matches(msg, km.Sort):
		v.sortIx = (v.sortIx + 1) % len(orderSorts)
		v.rebuild()
		v.tbl.Top()
		return nil
	case key.Matches(msg, km.Cancel):
		o, ok := v.selected()
		if !ok {
			return nil
		}
		d, ctx := v.c.D, v.c.Ctx
		return common.AskConfirm(fmt.Sprintf("Cancel order #%d (%s)?", o.OrderID, o.Status), func() tea.Msg {
			_, err := d.CancelOrder(ctx, o.OrderID)
			return common.ActionDoneMsg{Text: fmt.Sprintf("order #%d cancelled", o.OrderID), Err: common.WrapAction(err, "cancel #%d", o.OrderID)}
		})
	case key.Matches(msg, km.Terminate):
		o, ok := v.selected()
		if !ok {
			return nil
		}
		return v.terminate(o)
	case key.Matches(msg, km.User):
		if o, ok := v.selected(); ok {
			return common.OpenUser(o.UserID)
		}
		return nil
	}
	var cmd tea.Cmd
	if v.detail != nil && (key.Matches(msg, km.Up) || key.Matches(msg, km.Down)) {
		v.pane, cmd = v.pane.Update(msg)
		return cmd
	}
	v.tbl.Update(msg)
	return nil
}

// selected is the order the action keys act on: the one in the detail pane when it
// is open, else the one under the cursor.
func (v *orders) selected() (api.Order, bool) {
	if v.detail != nil {
		return *v.detail, true
	}
	return v.cursorOrder()
}

// terminate asks before deleting o's server, which cannot be undone; only an active
// order has a server, so for any other the status line says why nothing happens.
func (v *orders) terminate(o api.Order) tea.Cmd {
	switch {
	case v.terminating[o.OrderID]:
		return common.Notice(false, "order #%d is already being terminated", o.OrderID)
	case o.Status != "active" && o.Status != "suspended":
		return common.Notice(true, "order #%d is %s: only an active or suspended order has a server to terminate", o.OrderID, o.Status)
	}
	server := "its server"
	if ip := components.Deref(o.IPAddress); ip != "" {
		server += " " + ip
	}
	if o.Provider != "" {
		server += " at " + o.Provider
	}
	d, ctx, id, refreshKey := v.c.D, v.c.Ctx, o.OrderID, v.c.Km.Refresh.Help().Key
	return func() tea.Msg {
		return common.ConfirmMsg{
			Prompt:  fmt.Sprintf("Terminate order #%d and delete %s? This cannot be undone.", id, server),
			Working: fmt.Sprintf("terminating order #%d…", id),
			Run: tea.Sequence(func() tea.Msg { return terminateStartedMsg{id: id} }, func() tea.Msg {
				done, err := d.TerminateOrder(ctx, id)
				if err != nil {
					var ae *api.Error
					if !errors.As(err, &ae) {
						// Not answered: the daemon may have the deletion under way.
						err = fmt.Errorf("%w (may still be under way; %s re-reads)", err, refreshKey)
					}
					return common.ActionDoneMsg{Err: common.WrapAction(err, "terminate order #%d", id), OrderID: id}
				}
				text := fmt.Sprintf("order #%d terminated, its server deleted", id)
				if done.Status != "terminated" {
					// A suspended server's deletion is queued behind its power call.
					text = fmt.Sprintf("order #%d: the deletion of its server is queued (%s)", id, done.Status)
				}
				return common.ActionDoneMsg{Text: text, OrderID: id, Order: &done}
			}),
		}
	}
}

// position says which orders of the list the page holds, counting from the newest,
// and which page keys lead somewhere from it.
func (v *orders) position() string {
	idx := v.pageIndex()
	if !v.loaded {
		return fmt.Sprintf("page %d", idx+1)
	}
	s := fmt.Sprintf("page %d empty", idx+1)
	if n := len(v.all); n > 0 {
		s = fmt.Sprintf("orders %d–%d", idx*ordersPage+1, idx*ordersPage+n)
	}
	if idx > 0 {
		s += " · " + v.c.Km.PrevPage.Help().Key + " newer"
	}
	switch {
	case v.more:
		s += " · " + v.c.Km.NextPage.Help().Key + " older"
	case idx > 0:
		s += " · last page"
	}
	return s
}

func (v *orders) Render() string {
	st := v.c.St
	status := v.status()
	if status == "" {
		status = "all"
	}
	head := st.Label.Render("status ") + st.Value.Render(status) +
		st.Label.Render("  sort ") + st.Value.Render(orderSorts[v.sortIx].name) +
		"  " + st.Value.Render(v.position()) +
		st.Label.Render(fmt.Sprintf("  %d of %d shown", len(v.rows), len(v.all)))
	head = v.withErr(head)
	var body string
	switch {
	case !v.loaded && v.err == nil:
		body = v.c.LoadingLine("orders")
	case len(v.rows) == 0 && v.loaded:
		body = st.Muted.Render("no orders match")
	default:
		body = v.tbl.View()
	}
	return head + "\n" + v.withPane(body)
}
