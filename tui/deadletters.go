package tui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
)

type deadLettersMsg struct {
	orders []api.Order
	err    error
}

func (m deadLettersMsg) fetchErr() error { return m.err }

// deadLetters lists failed orders in the dead-letter list; requeue one, requeue all
// and purge each ask for confirmation first.
type deadLetters struct {
	orderTable
}

var dlqCols = []column{
	{"id", 6, 0, 0}, {"user", 6, 0, 4}, {"plan", 10, 1, 3}, {"region", 8, 1, 5}, {"try", 3, 0, 6}, {"failed", 10, 0, 2}, {"error", 12, 4, 1},
}

func newDeadLetters(c *common) *deadLetters {
	return &deadLetters{newOrderTable(c, dlqCols)}
}

func (v *deadLetters) title() string { return "dead letters" }

func (v *deadLetters) refresh() tea.Cmd {
	d, ctx := v.c.d, v.c.ctx
	return func() tea.Msg {
		o, err := d.DeadLetters(ctx, 100)
		return deadLettersMsg{orders: o, err: err}
	}
}

func (v *deadLetters) keys() []key.Binding {
	km := v.c.km
	if v.detail != nil {
		return []key.Binding{km.Back, km.Up, km.Down, km.Requeue}
	}
	return []key.Binding{km.Up, km.Down, km.Detail, km.Requeue, km.RequeueAll, km.Purge}
}

func (v *deadLetters) setFilter(s string) { v.filt = s; v.rebuild() }

func (v *deadLetters) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case deadLettersMsg:
		v.err = msg.err
		if msg.err == nil {
			v.all, v.loaded = msg.orders, true
			v.rebuild()
		}
	case eventBatchMsg:
		for _, ev := range msg {
			// A new dead letter is worth an immediate re-read: it is what operators
			// watch this view for.
			if ev.Type == api.EventOrder && ev.Order.Event == "dead_lettered" {
				return v.refresh()
			}
		}
	}
	return nil
}

func (v *deadLetters) rebuild() {
	v.filterRows()
	v.setRows(func(o api.Order, now time.Time) table.Row {
		return table.Row{
			strconv.FormatInt(o.OrderID, 10), strconv.FormatInt(o.UserID, 10), o.SpecID, o.Region,
			strconv.Itoa(o.Attempts), ago(now, o.UpdatedAt), oneLine(deref(o.ErrorMessage)),
		}
	})
}

func (v *deadLetters) selected() (api.Order, bool) {
	if v.detail != nil {
		return *v.detail, true
	}
	return v.cursorOrder()
}

func (v *deadLetters) handleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.km
	d, ctx := v.c.d, v.c.ctx
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
		return askConfirm(fmt.Sprintf("Requeue order #%d?", o.OrderID), func() tea.Msg {
			_, err := d.Requeue(ctx, o.OrderID)
			return actionDoneMsg{text: fmt.Sprintf("order #%d requeued", o.OrderID), err: wrapAction(err, "requeue #%d", o.OrderID)}
		})
	case key.Matches(msg, km.RequeueAll):
		if len(v.all) == 0 {
			return nil
		}
		return askConfirm(fmt.Sprintf("Requeue all %d dead letters?", len(v.all)), func() tea.Msg {
			n, err := d.RequeueAll(ctx)
			return actionDoneMsg{text: fmt.Sprintf("%d dead letters requeued", n), err: wrapAction(err, "requeue all")}
		})
	case key.Matches(msg, km.Purge):
		if len(v.all) == 0 {
			return nil
		}
		return askConfirm(fmt.Sprintf("Purge all %d dead letters? The orders stay failed.", len(v.all)), func() tea.Msg {
			n, err := d.PurgeDLQ(ctx)
			return actionDoneMsg{text: fmt.Sprintf("%d dead letters purged", n), err: wrapAction(err, "purge")}
		})
	}
	var cmd tea.Cmd
	if v.detail != nil {
		v.pane, cmd = v.pane.Update(msg)
		return cmd
	}
	v.tbl, cmd = v.tbl.Update(msg)
	return cmd
}

func (v *deadLetters) render() string {
	st := v.c.st
	head := st.Label.Render(fmt.Sprintf("%d dead letters", len(v.all)))
	if len(v.rows) != len(v.all) {
		head += st.Label.Render(fmt.Sprintf(", %d shown", len(v.rows)))
	}
	head = v.withErr(head)
	var body string
	switch {
	case !v.loaded && v.err == nil:
		body = loadingLine(v.c, "dead letters")
	case len(v.all) == 0 && v.loaded:
		body = st.OK.Render("no dead letters")
	case len(v.rows) == 0:
		body = st.Muted.Render("no dead letters match")
	default:
		body = v.tbl.View()
	}
	return head + "\n" + v.withPane(body)
}
