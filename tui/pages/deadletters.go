package pages

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type deadLettersMsg struct {
	orders []api.Order
	err    error
}

func (m deadLettersMsg) FetchErr() error { return m.err }

// deadLetters lists failed orders in the dead-letter list; requeue one, requeue all
// and purge each ask for confirmation first.
type deadLetters struct {
	orderTable
	more bool // the daemon holds more dead letters than the page shows
}

// dlqShown is how many dead letters the page reads: bulk actions take what is shown,
// so past it they take the newest dlqShown and say so.
const dlqShown = 100

var dlqCols = []components.Column{
	{Title: "id", Min: 4, Fit: true}, {Title: "user", Min: 4, Drop: 4, Fit: true}, {Title: "plan", Min: 8, Flex: 1, Drop: 3},
	{Title: "region", Min: 6, Flex: 1, Drop: 5}, {Title: "try", Min: 3, Drop: 6}, {Title: "failed", Min: 9, Drop: 2},
	{Title: "error", Min: 12, Flex: 4, Drop: 1},
}

func NewDeadLetters(c *common.Common) *deadLetters {
	return &deadLetters{orderTable: newOrderTable(c, dlqCols)}
}

func (v *deadLetters) Title() string { return "dead letters" }

func (v *deadLetters) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		o, err := d.DeadLetters(ctx, dlqShown+1) // one more tells whether there are more
		return deadLettersMsg{orders: o, err: err}
	}
}

func (v *deadLetters) Keys() []key.Binding {
	km := v.c.Km
	if v.detail != nil {
		return []key.Binding{km.Back, km.Up, km.Down, km.User, km.Requeue}
	}
	return []key.Binding{km.Up, km.Down, km.Detail, km.User, km.Requeue, km.RequeueAll, km.Purge}
}

func (v *deadLetters) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }

func (v *deadLetters) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case deadLettersMsg:
		v.err = msg.err
		if msg.err == nil {
			v.all, v.loaded, v.more = msg.orders, true, len(msg.orders) > dlqShown
			if v.more {
				v.all = v.all[:dlqShown]
			}
			v.rebuild()
		}
	case common.PlansMsg:
		v.redrawDetail()
	case common.EventBatchMsg:
		for _, ev := range msg {
			// A new dead letter is worth an immediate re-read: it is what operators
			// watch this view for.
			if ev.Type == api.EventOrder && ev.Order.Event == "dead_lettered" {
				return v.Refresh()
			}
		}
	}
	return nil
}

func (v *deadLetters) rebuild() {
	v.filterRows()
	v.setRows(func(o api.Order, now time.Time) []string {
		return []string{
			strconv.FormatInt(o.OrderID, 10), strconv.FormatInt(o.UserID, 10), o.SpecID, o.Region,
			strconv.Itoa(o.Attempts), components.Ago(now, o.UpdatedAt), components.OneLine(components.Deref(o.ErrorMessage)),
		}
	})
}

func (v *deadLetters) selected() (api.Order, bool) {
	if v.detail != nil {
		return *v.detail, true
	}
	return v.cursorOrder()
}

func (v *deadLetters) HandleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.Km
	d, ctx := v.c.D, v.c.Ctx
	switch {
	case key.Matches(msg, km.Back) && v.detail != nil:
		v.closeDetail()
		return nil
	case key.Matches(msg, km.Detail):
		if o, ok := v.selected(); ok {
			v.openDetail(o)
		}
		return nil
	case key.Matches(msg, km.Requeue):
		o, ok := v.selected()
		if !ok {
			return nil
		}
		return common.AskConfirm(fmt.Sprintf("Requeue order #%d?", o.OrderID), func() tea.Msg {
			_, err := d.Requeue(ctx, o.OrderID)
			return common.ActionDoneMsg{Text: fmt.Sprintf("order #%d requeued", o.OrderID), Err: common.WrapAction(err, "requeue #%d", o.OrderID)}
		})
	case key.Matches(msg, km.User):
		if o, ok := v.selected(); ok {
			return common.OpenUser(o.UserID)
		}
		return nil
	case key.Matches(msg, km.RequeueAll):
		ids := v.shownIDs()
		if len(ids) == 0 {
			return nil
		}
		return common.AskConfirm(fmt.Sprintf("Requeue %s?", v.naming(ids)), requeueEach(d, ctx, ids))
	case key.Matches(msg, km.Purge):
		ids := v.shownIDs()
		if len(ids) == 0 {
			return nil
		}
		if v.more {
			return common.Notice(true, "purge empties the whole dead-letter list, more than the %d shown: requeue or wait until it is shorter", len(v.all))
		}
		if v.filt != "" {
			// The daemon purges its whole list or nothing: a purge of only the rows a
			// filter shows cannot be sent.
			return common.Notice(true, "purge empties the whole dead-letter list: clear the filter (esc) first")
		}
		return common.AskConfirm(fmt.Sprintf("Purge %s? The orders stay failed.", v.naming(ids)), purgeExactly(d, ctx, ids))
	}
	var cmd tea.Cmd
	if v.detail != nil {
		v.pane, cmd = v.pane.Update(msg)
		return cmd
	}
	v.tbl.Update(msg)
	return nil
}

// shownIDs are the dead letters on screen, in screen order: what a bulk action names
// and what it then acts on, whatever arrives between the question and the answer.
func (v *deadLetters) shownIDs() []int64 {
	ids := make([]int64, len(v.rows))
	for i, o := range v.rows {
		ids[i] = o.OrderID
	}
	return ids
}

// naming says which dead letters a bulk action takes, ids included, so the question
// names exactly what the answer acts on.
func (v *deadLetters) naming(ids []int64) string {
	which := "all"
	if v.more {
		which = "the newest"
	}
	if v.filt != "" {
		which = "the filtered"
	}
	noun := "dead letters"
	if len(ids) == 1 {
		noun = "dead letter"
	}
	return fmt.Sprintf("%s %d %s (%s)", which, len(ids), noun, idList(ids, 6))
}

// idList is "#42, #39, #38", or its first n and how many more.
func idList(ids []int64, n int) string {
	var parts []string
	for i, id := range ids {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("#%d", id))
	}
	return strings.Join(parts, ", ")
}

// requeueEach requeues exactly ids, one request each: the daemon's requeue-all would
// also take dead letters that arrived after the operator was asked. An id that has
// left the list since is reported, and the others still go.
func requeueEach(d common.Daemon, ctx context.Context, ids []int64) tea.Cmd {
	return func() tea.Msg {
		var failed []string
		var first error
		for _, id := range ids {
			if _, err := d.Requeue(ctx, id); err != nil {
				failed = append(failed, fmt.Sprintf("#%d", id))
				if first == nil {
					first = common.WrapAction(err, "requeue #%d", id)
				}
			}
		}
		done := len(ids) - len(failed)
		if first != nil {
			return common.ActionDoneMsg{Err: fmt.Errorf("%d of %d requeued, not %s: %w", done, len(ids), strings.Join(failed, ", "), first)}
		}
		return common.ActionDoneMsg{Text: fmt.Sprintf("%d requeued (%s)", done, idList(ids, 6))}
	}
}

// purgeExactly purges only if the daemon's list is still exactly ids. The admin API
// purges the whole list and takes no ids, so the console re-reads the list first and
// refuses when it changed; the window left is the one request's round trip.
func purgeExactly(d common.Daemon, ctx context.Context, ids []int64) tea.Cmd {
	return func() tea.Msg {
		now, err := d.DeadLetters(ctx, len(ids)+1)
		if err != nil {
			return common.ActionDoneMsg{Err: common.WrapAction(err, "purge")}
		}
		if !sameIDs(now, ids) {
			return common.ActionDoneMsg{Err: fmt.Errorf("purge: the dead-letter list changed since you were asked (%d now): nothing purged; look again before purging", len(now))}
		}
		n, err := d.PurgeDLQ(ctx)
		if err == nil && n != len(ids) {
			// Something reached the list in the round trip: say so rather than claim
			// the named ones were all that went.
			err = fmt.Errorf("purged %d, not the %d you were asked about: the list changed in between", n, len(ids))
		}
		return common.ActionDoneMsg{Text: fmt.Sprintf("%d dead letters purged (%s)", n, idList(ids, 6)), Err: common.WrapAction(err, "purge")}
	}
}

func sameIDs(orders []api.Order, ids []int64) bool {
	if len(orders) != len(ids) {
		return false
	}
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for _, o := range orders {
		if !want[o.OrderID] {
			return false
		}
	}
	return true
}

func (v *deadLetters) Render() string {
	st := v.c.St
	head := st.Label.Render(fmt.Sprintf("%d dead letters", len(v.all)))
	if v.more {
		head = st.Label.Render(fmt.Sprintf("more than %d dead letters: the newest %d shown", len(v.all), len(v.all)))
	}
	if len(v.rows) != len(v.all) {
		head += st.Label.Render(fmt.Sprintf(", %d shown", len(v.rows)))
	}
	head = v.withErr(head)
	var body string
	switch {
	case !v.loaded && v.err == nil:
		body = v.c.LoadingLine("dead letters")
	case len(v.all) == 0 && v.loaded:
		body = st.OK.Render("no dead letters")
	case len(v.rows) == 0:
		body = st.Muted.Render("no dead letters match")
	default:
		body = v.tbl.View()
	}
	return head + "\n" + v.withPane(body)
}
