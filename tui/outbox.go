package tui

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
)

type outboxMsg struct {
	ob  api.Outbox
	err error
}

func (m outboxMsg) fetchErr() error { return m.err }

const outboxKeep = 100

// outbox shows Telegram messages waiting to be sent and the latest sent, logged or
// dropped ones; message texts are masked again here in case a secret slipped through.
type outbox struct {
	tableView
	ob   api.Outbox
	msgs []api.Message
}

var outboxCols = []column{{"id", 5, 0, 0}, {"chat", 10, 0, 3}, {"status", 7, 0, 0}, {"try", 3, 0, 4}, {"when", 9, 0, 2}, {"text", 16, 4, 0}, {"error", 8, 1, 1}}

func newOutbox(c *common) *outbox { return &outbox{tableView: newTableView(c, outboxCols)} }

func (v *outbox) title() string       { return "outbox" }
func (v *outbox) modal() bool         { return false }
func (v *outbox) setFilter(s string)  { v.filt = s; v.rebuild() }
func (v *outbox) keys() []key.Binding { return []key.Binding{v.c.km.Up, v.c.km.Down} }

func (v *outbox) refresh() tea.Cmd {
	d, ctx := v.c.d, v.c.ctx
	return func() tea.Msg {
		ob, err := d.Outbox(ctx, outboxKeep)
		return outboxMsg{ob: ob, err: err}
	}
}

func (v *outbox) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case outboxMsg:
		v.err = msg.err
		if msg.err == nil {
			v.ob, v.loaded = msg.ob, true
			v.msgs = append(slices.Clone(msg.ob.Queued), msg.ob.Recent...)
			v.rebuild()
		}
	case eventBatchMsg:
		changed := false
		for _, ev := range msg {
			if ev.Type != api.EventMessage {
				continue
			}
			m := *ev.Message
			changed = true
			if i := slices.IndexFunc(v.msgs, func(x api.Message) bool { return x.ID == m.ID }); i >= 0 {
				v.msgs = slices.Delete(v.msgs, i, i+1)
			}
			v.msgs = append([]api.Message{m}, v.msgs...)
		}
		if changed {
			if len(v.msgs) > 2*outboxKeep {
				v.msgs = v.msgs[:2*outboxKeep]
			}
			v.rebuild()
		}
	}
	return nil
}

func (v *outbox) rebuild() {
	now := v.c.now()
	var rows []table.Row
	for _, m := range v.msgs {
		text := maskSecrets(oneLine(m.Text))
		when := m.CreatedAt
		if m.SentAt != nil {
			when = *m.SentAt
		}
		row := table.Row{strconv.FormatUint(m.ID, 10), strconv.FormatInt(m.ChatID, 10), m.Status, strconv.Itoa(m.Attempts), ago(now, when), text, maskSecrets(oneLine(m.LastError))}
		if !containsFold(fmt.Sprint(row), v.filt) {
			continue
		}
		rows = append(rows, row)
	}
	v.tbl.SetRows(rows)
	keepCursor(&v.tbl)
}

func (v *outbox) handleKey(msg tea.KeyMsg) tea.Cmd {
	var cmd tea.Cmd
	v.tbl, cmd = v.tbl.Update(msg)
	return cmd
}

func (v *outbox) render() string {
	st := v.c.st
	queued := 0
	for _, m := range v.msgs {
		if m.Status == "queued" {
			queued++
		}
	}
	sending := st.Warn.Render("sending off: messages are logged")
	if v.ob.Sending {
		sending = st.OK.Render("sending to Telegram")
	}
	head := sending + st.Label.Render(fmt.Sprintf(" · %d queued · %d shown", queued, len(v.tbl.Rows())))
	head = v.withErr(head)
	switch {
	case !v.loaded && v.err == nil:
		return head + "\n" + loadingLine(v.c, "outbox")
	case len(v.tbl.Rows()) == 0:
		return head + "\n" + st.Muted.Render("no messages")
	}
	return head + "\n" + v.tbl.View()
}
