package pages

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type outboxMsg struct {
	ob  api.Outbox
	err error
}

func (m outboxMsg) FetchErr() error { return m.err }

const outboxKeep = 100

// outbox shows Telegram messages waiting to be sent and the latest sent, logged or
// dropped ones; message texts are masked again here in case a secret slipped through.
type outbox struct {
	tableView
	ob   api.Outbox
	msgs []api.Message
}

var outboxCols = []components.Column{
	{Title: "id", Min: 3, Fit: true}, {Title: "chat", Min: 4, Drop: 3, Fit: true}, {Title: "status", Min: 7}, {Title: "try", Min: 3, Drop: 4},
	{Title: "when", Min: 9, Drop: 2}, {Title: "text", Min: 16, Flex: 4}, {Title: "error", Min: 8, Flex: 1, Drop: 1},
}

func NewOutbox(c *common.Common) *outbox { return &outbox{tableView: newTableView(c, outboxCols)} }

func (v *outbox) Title() string       { return "outbox" }
func (v *outbox) Modal() bool         { return false }
func (v *outbox) SetFilter(s string)  { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *outbox) Keys() []key.Binding { return []key.Binding{v.c.Km.Up, v.c.Km.Down} }

func (v *outbox) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		ob, err := d.Outbox(ctx, outboxKeep)
		return outboxMsg{ob: ob, err: err}
	}
}

func (v *outbox) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case outboxMsg:
		v.err = msg.err
		if msg.err == nil {
			v.ob, v.loaded = msg.ob, true
			v.msgs = append(slices.Clone(msg.ob.Queued), msg.ob.Recent...)
			v.rebuild()
		}
	case common.EventBatchMsg:
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
	now := v.c.Now()
	var rows []components.Row
	for _, m := range v.msgs {
		text := components.MaskSecrets(components.OneLine(m.Text))
		when := m.CreatedAt
		if m.SentAt != nil {
			when = *m.SentAt
		}
		cells := []string{strconv.FormatUint(m.ID, 10), strconv.FormatInt(m.ChatID, 10), m.Status, strconv.Itoa(m.Attempts), components.Ago(now, when), text, components.MaskSecrets(components.OneLine(m.LastError))}
		if !components.ContainsFold(strings.Join(cells, " "), v.filt) {
			continue
		}
		rows = append(rows, components.Row{Key: cells[0], Cells: cells})
	}
	v.tbl.SetRows(rows)
}

func (v *outbox) HandleKey(msg tea.KeyMsg) tea.Cmd {
	v.tbl.Update(msg)
	return nil
}

func (v *outbox) Render() string {
	st := v.c.St
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
		return head + "\n" + v.c.LoadingLine("outbox")
	case len(v.tbl.Rows()) == 0:
		return head + "\n" + st.Muted.Render("no messages")
	}
	return head + "\n" + v.tbl.View()
}
