package pages

import (
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

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
	// pane shows the message under the cursor whole: with sending off, the outbox is
	// the only place an operator sees what the bot said and which buttons it offered.
	pane viewport.Model
	open bool
}

var outboxCols = []components.Column{
	{Title: "id", Min: 3, Fit: true}, {Title: "chat", Min: 4, Drop: 3, Fit: true}, {Title: "status", Min: 7}, {Title: "try", Min: 3, Drop: 4},
	{Title: "when", Min: 9, Drop: 2}, {Title: "text", Min: 16, Flex: 4}, {Title: "error", Min: 8, Flex: 1, Drop: 1},
}

func NewOutbox(c *common.Common) *outbox {
	return &outbox{tableView: newTableView(c, outboxCols), pane: viewport.New(40, 10)}
}

func (v *outbox) Title() string      { return "outbox" }
func (v *outbox) Modal() bool        { return v.open }
func (v *outbox) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }

func (v *outbox) Keys() []key.Binding {
	km := v.c.Km
	if v.open {
		return []key.Binding{km.Back, km.Up, km.Down}
	}
	return []key.Binding{km.Up, km.Down, km.Detail}
}

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
		text := components.MaskSecrets(components.OneLine(plainText(m)))
		when := m.CreatedAt
		if m.SentAt != nil {
			when = *m.SentAt
		}
		if m.CallbackQueryID != "" {
			text = "↩ " + text // the answer to a button press, shown over the chat
		}
		if n := countButtons(m); n > 0 {
			text += fmt.Sprintf(" [%d buttons]", n)
		}
		cells := []string{strconv.FormatUint(m.ID, 10), strconv.FormatInt(m.ChatID, 10), m.Status, strconv.Itoa(m.Attempts), components.Ago(now, when), text, components.MaskSecrets(components.OneLine(m.LastError))}
		if !components.ContainsFold(strings.Join(cells, " "), v.filt) {
			continue
		}
		rows = append(rows, components.Row{Key: cells[0], Cells: cells})
	}
	v.tbl.SetRows(rows)
	if v.open {
		v.setPane()
	}
}

// htmlTag is a tag of Telegram's HTML parse mode.
var htmlTag = regexp.MustCompile(`<[^<>]*>`)

// plainText is a message's text as the chat shows it, for the one-line summary: an
// HTML message without its tags and entities (the detail shows it as sent).
func plainText(m api.Message) string {
	if !strings.EqualFold(m.ParseMode, "HTML") {
		return m.Text
	}
	return html.UnescapeString(htmlTag.ReplaceAllString(m.Text, ""))
}

func countButtons(m api.Message) int {
	n := 0
	for _, row := range m.Buttons {
		n += len(row)
	}
	return n
}

func (v *outbox) selected() (api.Message, bool) {
	return components.Selected(&v.tbl, v.msgs, func(m api.Message) string { return strconv.FormatUint(m.ID, 10) })
}

func (v *outbox) HandleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.Km
	switch {
	case key.Matches(msg, km.Detail) && v.open:
		// enter on an open pane is the table's (it does nothing there)
	case detailKey(msg, km, &v.open, v.tbl.Len(), &v.pane, func() { v.SetSize(v.w, v.h) }, v.setPane):
		return nil
	}
	if v.open && (msg.String() == "pgup" || msg.String() == "pgdown") {
		// The table keeps up and down: the pane follows the cursor; page keys scroll
		// a long message.
		if msg.String() == "pgup" {
			v.pane.HalfPageUp()
		} else {
			v.pane.HalfPageDown()
		}
		return nil
	}
	if v.tbl.Update(msg) && v.open {
		v.setPane()
		v.pane.GotoTop()
	}
	return nil
}

func (v *outbox) SetSize(w, h int) {
	v.w, v.h = w, h
	tw := w
	if v.open {
		tw = w * 45 / 100
		v.pane.Width, v.pane.Height = w-tw-2, h-1
	}
	v.fitTable(tw)
	if v.open {
		v.setPane()
	}
}

// setPane shows the selected message whole: its text as the bot sent it (secrets
// masked), how Telegram parses it, each button with its callback data on a line of
// its own (what hangar telegram press sends back), and for the answer to a button
// press the callback query it answers.
func (v *outbox) setPane() {
	st, now, w := v.c.St, v.c.Now(), v.pane.Width
	m, ok := v.selected()
	if !ok {
		v.pane.SetContent("")
		return
	}
	wrap := lipgloss.NewStyle().Width(w)
	var b strings.Builder
	row := func(k, val string) {
		b.WriteString(wrap.Render(st.Label.Render(fmt.Sprintf("%-8s", k))+" "+val) + "\n")
	}
	kind := "message"
	if m.CallbackQueryID != "" {
		kind = "button answer"
	}
	b.WriteString(st.Title.Render(fmt.Sprintf("%s #%d", kind, m.ID)) + "\n")
	row("chat", strconv.FormatInt(m.ChatID, 10))
	tries := "tries"
	if m.Attempts == 1 {
		tries = "try"
	}
	row("status", fmt.Sprintf("%s, %d %s", m.Status, m.Attempts, tries))
	row("queued", components.Ago(now, m.CreatedAt))
	if m.SentAt != nil {
		row("sent", components.Ago(now, *m.SentAt))
	}
	parse := m.ParseMode
	if parse == "" {
		parse = "plain text"
	}
	row("parse", parse)
	if m.CallbackQueryID != "" {
		row("answers", "callback query "+m.CallbackQueryID)
	}
	if m.LastError != "" {
		row("error", components.MaskSecrets(m.LastError))
	}
	b.WriteString("\n" + wrap.Render(components.MaskSecrets(m.Text)) + "\n")
	if n := countButtons(m); n > 0 {
		b.WriteString("\n" + st.Title.Render(fmt.Sprintf("buttons (%d)", n)) + st.Label.Render(": text → callback data") + "\n")
		i := 0
		for _, r := range m.Buttons {
			for _, btn := range r {
				i++
				action := btn.CallbackData
				if btn.URL != "" {
					action = "url " + btn.URL
				}
				b.WriteString(wrap.Render(fmt.Sprintf("[%d] %s → ", i, components.OneLine(btn.Text))+st.Value.Render(action)) + "\n")
			}
		}
		b.WriteString(wrap.Render(st.Muted.Render(fmt.Sprintf("press one: hangar telegram press %d 1", m.ID))))
	}
	v.pane.SetContent(strings.TrimRight(b.String(), "\n"))
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
	body := v.tbl.View()
	if v.open {
		body = lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(v.tbl.Width()).Render(body), st.Pane.Render(v.pane.View()))
	}
	return head + "\n" + body
}
