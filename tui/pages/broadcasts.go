package pages

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type broadcastsMsg struct {
	list []api.Broadcast
	err  error
}

func (m broadcastsMsg) FetchErr() error { return m.err }

// broadcastSentMsg is the daemon's answer to a new broadcast; text is what was sent.
type broadcastSentMsg struct {
	b    api.Broadcast
	text string
	err  error
}

// broadcastDeclinedMsg says the question about a new broadcast was answered no (or
// refused): the page goes back to the draft.
type broadcastDeclinedMsg struct{}

const (
	// broadcastsShown is how many the page reads: the daemon keeps the newest 100.
	broadcastsShown = 100
	// maxBroadcastText is Telegram's longest message, which the daemon enforces.
	maxBroadcastText = 4096
	// broadcastQuote is how much of a text a question quotes, in cells.
	broadcastQuote = 40
)

type broadcastMode int

const (
	bcList    broadcastMode = iota
	bcCompose               // typing the text: every key goes to the editor
	// bcPreview shows the text as it will be sent while the question is open, and
	// after a yes until the daemon answers.
	bcPreview
)

// broadcasts lists the messages sent to every user of the bot, newest first, with
// their progress as the daemon commits it (live, from the broadcast event); n writes
// a new one (previewed whole, with its character count, and confirmed quoting its
// start) and c cancels the one under the cursor, naming its id. Rows are keyed by id.
type broadcasts struct {
	tableView
	list  []api.Broadcast
	pane  viewport.Model
	open  bool
	mode  broadcastMode
	draft textarea.Model
	// preview is the text the open question is about, exactly as it is sent.
	preview string
	sendErr error
}

var broadcastCols = []components.Column{
	{Title: "id", Min: 2, Fit: true}, {Title: "state", Min: 9}, {Title: "progress", Min: 9, Fit: true},
	{Title: "sent", Min: 5, Fit: true, Drop: 3}, {Title: "failed", Min: 6, Drop: 5}, {Title: "blocked", Min: 7, Drop: 4},
	{Title: "created", Min: 10, Drop: 2}, {Title: "by", Min: 10, Flex: 1, Drop: 6}, {Title: "text", Min: 12, Flex: 3, Drop: 1},
}

func NewBroadcasts(c *common.Common) *broadcasts {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0 // the count says when it is too long: a paste is never cut silently
	ta.MaxHeight = 0
	ta.Placeholder = "the message every user who has talked to the bot gets"
	ta.Cursor.SetMode(cursor.CursorStatic)
	// ctrl+d previews here; delete still deletes forward.
	ta.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	return &broadcasts{tableView: newTableView(c, broadcastCols), pane: viewport.New(40, 10), draft: ta}
}

func (v *broadcasts) Title() string      { return "broadcasts" }
func (v *broadcasts) Modal() bool        { return v.open }
func (v *broadcasts) Capturing() bool    { return v.mode == bcCompose }
func (v *broadcasts) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }

func (v *broadcasts) Keys() []key.Binding {
	km := v.c.Km
	switch v.mode {
	case bcCompose:
		return []key.Binding{km.Preview, key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "new line")),
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close (draft kept)"))}
	case bcPreview:
		return nil
	}
	if v.open {
		return []key.Binding{km.Back, km.NewBroadcast, km.CancelBroadcast}
	}
	return []key.Binding{km.Up, km.Down, km.Detail, km.NewBroadcast, km.CancelBroadcast}
}

func (v *broadcasts) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		l, err := d.Broadcasts(ctx, broadcastsShown)
		return broadcastsMsg{list: l, err: err}
	}
}

func (v *broadcasts) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case broadcastsMsg:
		v.err = msg.err
		if msg.err == nil {
			v.list, v.loaded = msg.list, true
			v.rebuild()
		}
	case common.EventBatchMsg:
		changed := false
		for _, ev := range msg {
			if ev.Type == api.EventBroadcast && ev.Broadcast != nil {
				v.upsert(*ev.Broadcast)
				changed = true
			}
		}
		if changed {
			v.rebuild()
		}
	case broadcastDeclinedMsg:
		if v.mode == bcPreview {
			v.mode = bcCompose
			return v.draft.Focus()
		}
	case broadcastSentMsg:
		return v.sent(msg)
	}
	return nil
}

// upsert puts b in the list in its place (newest first), replacing the older copy.
// A commit's event can arrive before or after a re-read: the one updated last wins.
func (v *broadcasts) upsert(b api.Broadcast) {
	if i := slices.IndexFunc(v.list, func(x api.Broadcast) bool { return x.ID == b.ID }); i >= 0 {
		if v.list[i].UpdatedAt.After(b.UpdatedAt) {
			return
		}
		v.list = slices.Clone(v.list)
		v.list[i] = b
		return
	}
	v.list = append(slices.Clone(v.list), b)
	slices.SortStableFunc(v.list, func(a, b api.Broadcast) int { return cmp.Compare(b.ID, a.ID) })
	if len(v.list) > broadcastsShown {
		v.list = v.list[:broadcastsShown]
	}
}

func (v *broadcasts) sent(msg broadcastSentMsg) tea.Cmd {
	if msg.err != nil {
		// Back to the draft, unchanged, with the daemon's reason beside it.
		v.mode, v.sendErr = bcCompose, msg.err
		err := common.WrapAction(msg.err, "send broadcast %q", quoteStart(msg.text))
		return tea.Batch(v.draft.Focus(), func() tea.Msg { return common.ActionDoneMsg{Err: err} })
	}
	v.mode, v.sendErr, v.preview = bcList, nil, ""
	v.draft.Reset()
	v.draft.Blur()
	v.upsert(msg.b)
	v.rebuild()
	v.tbl.Select(strconv.FormatInt(msg.b.ID, 10))
	b := msg.b
	return func() tea.Msg {
		return common.ActionDoneMsg{Text: fmt.Sprintf("broadcast #%d %s: %d recipients", b.ID, b.State, b.Total)}
	}
}

func (v *broadcasts) rebuild() {
	now := v.c.Now()
	var rows []components.Row
	for _, b := range v.list {
		cells := []string{strconv.FormatInt(b.ID, 10), b.State, fmt.Sprintf("%d/%d", b.Next, b.Total), strconv.Itoa(b.Sent),
			strconv.Itoa(b.Failed), strconv.Itoa(b.Blocked), components.Ago(now, b.CreatedAt), components.OneLine(b.By),
			components.MaskSecrets(components.OneLine(b.Text))}
		if components.ContainsFold(strings.Join(cells, " "), v.filt) {
			rows = append(rows, components.Row{Key: cells[0], Cells: cells})
		}
	}
	v.tbl.SetRows(rows)
	if v.open {
		v.setPane()
	}
}

func (v *broadcasts) selected() (api.Broadcast, bool) {
	return components.Selected(&v.tbl, v.list, func(b api.Broadcast) string { return strconv.FormatInt(b.ID, 10) })
}

// quoteStart is the start of a text as a question quotes it: one line, at most
// broadcastQuote cells, cut between words where it can be.
func quoteStart(text string) string {
	return components.Truncate(components.OneLine(text), broadcastQuote)
}

func (v *broadcasts) HandleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.Km
	switch v.mode {
	case bcCompose:
		return v.composeKey(msg)
	case bcPreview:
		return nil // the question, or the daemon, has the word
	}
	switch {
	case detailKey(msg, km, &v.open, v.tbl.Len(), &v.pane, func() { v.SetSize(v.w, v.h) }, v.setPane):
		return nil
	case key.Matches(msg, km.NewBroadcast):
		if v.c.ReadOnly() {
			return common.Notice(true, "✗ read-only: this console is a viewer's, so it sends no broadcast")
		}
		v.mode, v.open = bcCompose, false
		v.SetSize(v.w, v.h)
		return v.draft.Focus()
	case key.Matches(msg, km.CancelBroadcast):
		return v.askCancel()
	}
	if v.open {
		if key.Matches(msg, km.Up) || key.Matches(msg, km.Down) {
			var cmd tea.Cmd
			v.pane, cmd = v.pane.Update(msg)
			return cmd
		}
		return nil
	}
	v.tbl.Update(msg)
	return nil
}

func (v *broadcasts) composeKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case msg.String() == "esc":
		v.mode = bcList
		v.draft.Blur()
		v.SetSize(v.w, v.h)
		return nil
	case key.Matches(msg, v.c.Km.Preview):
		return v.askSend()
	}
	v.sendErr = nil
	var cmd tea.Cmd
	v.draft, cmd = v.draft.Update(msg)
	return cmd
}

// askSend shows the draft as it will be sent and asks, quoting its start; yes sends
// exactly the text shown, whatever arrives meanwhile.
func (v *broadcasts) askSend() tea.Cmd {
	text := strings.TrimSpace(v.draft.Value()) // as the daemon trims it
	n := utf8.RuneCountInString(text)
	switch {
	case n == 0:
		return common.Notice(true, "the broadcast is empty: type its text first")
	case n > maxBroadcastText:
		return common.Notice(true, "the broadcast is %d characters, %d over Telegram's %d: shorten it", n, n-maxBroadcastText, maxBroadcastText)
	case !utf8.ValidString(text):
		return common.Notice(true, "the broadcast is not valid UTF-8")
	}
	v.mode, v.preview = bcPreview, text
	v.draft.Blur()
	d, ctx := v.c.D, v.c.Ctx
	prompt := fmt.Sprintf("Send broadcast %q (%d characters) to every user who has talked to the bot?", quoteStart(text), n)
	return func() tea.Msg {
		return common.ConfirmMsg{Prompt: prompt, Working: "sending the broadcast…",
			Run: func() tea.Msg {
				b, err := d.CreateBroadcast(ctx, text)
				return broadcastSentMsg{b: b, text: text, err: err}
			},
			Declined: func() tea.Msg { return broadcastDeclinedMsg{} },
		}
	}
}

// askCancel asks to cancel the broadcast under the cursor, naming it; yes cancels that
// id, wherever the list has moved meanwhile.
func (v *broadcasts) askCancel() tea.Cmd {
	b, ok := v.selected()
	if !ok {
		return nil
	}
	if !b.Active() {
		return common.Notice(false, "broadcast #%d is %s: nothing to cancel", b.ID, b.State)
	}
	id, d, ctx := b.ID, v.c.D, v.c.Ctx
	prompt := fmt.Sprintf("Cancel broadcast #%d (%q, %d of %d done)? Nothing more of it is sent.", id,
		quoteStart(components.MaskSecrets(b.Text)), b.Next, b.Total)
	return common.AskConfirm(prompt, func() tea.Msg {
		got, err := d.CancelBroadcast(ctx, id)
		if err != nil {
			return common.ActionDoneMsg{Err: common.WrapAction(err, "cancel broadcast #%d", id)}
		}
		return common.ActionDoneMsg{Text: fmt.Sprintf("broadcast #%d cancelled: %d of %d sent", id, got.Sent, got.Total)}
	})
}

func (v *broadcasts) SetSize(w, h int) {
	v.w, v.h = w, h
	tw := w
	if v.open {
		tw = w * 55 / 100
		v.pane.Width, v.pane.Height = w-tw-2, h-1
	}
	v.fitTable(tw)
	v.draft.SetWidth(w)
	v.draft.SetHeight(max(1, h-1)) // under the head line
}

// setPane shows the selected broadcast whole.
func (v *broadcasts) setPane() {
	st, now, w := v.c.St, v.c.Now(), v.pane.Width
	b, ok := v.selected()
	if !ok {
		v.pane.SetContent("")
		return
	}
	wrap := lipgloss.NewStyle().Width(w)
	var s strings.Builder
	row := func(k, val string) {
		s.WriteString(wrap.Render(st.Label.Render(fmt.Sprintf("%-9s", k))+" "+val) + "\n")
	}
	s.WriteString(st.Title.Render(fmt.Sprintf("broadcast #%d", b.ID)) + "\n")
	row("state", b.State)
	row("by", b.By)
	row("created", components.Ago(now, b.CreatedAt))
	if !b.FinishedAt.IsZero() {
		row("finished", components.Ago(now, b.FinishedAt))
	}
	row("progress", fmt.Sprintf("%d of %d", b.Next, b.Total))
	row("sent", strconv.Itoa(b.Sent))
	row("failed", strconv.Itoa(b.Failed))
	row("blocked", strconv.Itoa(b.Blocked))
	if b.LastError != "" {
		row("error", components.MaskSecrets(b.LastError))
	}
	s.WriteString("\n" + wrap.Render(components.MaskSecrets(b.Text)))
	v.pane.SetContent(s.String())
}

// count is a text's length as the daemon counts it, against Telegram's limit.
func (v *broadcasts) count(text string) string {
	st := v.c.St
	n := utf8.RuneCountInString(strings.TrimSpace(text))
	c := fmt.Sprintf("%d/%d characters", n, maxBroadcastText)
	if n > maxBroadcastText {
		return st.Alarm.Render(c + fmt.Sprintf(", %d too many", n-maxBroadcastText))
	}
	return st.Value.Render(c)
}

func (v *broadcasts) Render() string {
	switch v.mode {
	case bcCompose:
		return v.renderCompose()
	case bcPreview:
		return v.renderPreview()
	}
	st := v.c.St
	active := 0
	for _, b := range v.list {
		if b.Active() {
			active++
		}
	}
	head := st.Label.Render(fmt.Sprintf("messages to every user, newest first · %d shown · ", len(v.tbl.Rows())))
	if active > 0 {
		head += st.Warn.Render(fmt.Sprintf("%d under way", active))
	} else {
		head += st.Label.Render("none under way")
	}
	head = v.withErr(head)
	var body string
	switch {
	case !v.loaded && v.err == nil:
		body = v.c.LoadingLine("broadcasts")
	case v.tbl.Len() == 0:
		body = st.Muted.Render("no broadcasts yet: " + v.c.Km.NewBroadcast.Help().Key + " writes one")
	default:
		body = v.tbl.View()
	}
	if v.open {
		body = lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(v.tbl.Width()).Render(body), st.Pane.Render(v.pane.View()))
	}
	return head + "\n" + body
}

func (v *broadcasts) renderCompose() string {
	st := v.c.St
	head := st.Title.Render("new broadcast") + st.Label.Render(" · ") + v.count(v.draft.Value())
	if v.sendErr != nil {
		head += "  " + st.StatusErr.Render(common.DescribeErr(v.sendErr))
	}
	return lipgloss.NewStyle().MaxWidth(v.w).Render(head) + "\n" + v.draft.View()
}

// renderPreview is the text exactly as it is sent, whole if it fits the screen.
func (v *broadcasts) renderPreview() string {
	st := v.c.St
	head := st.Title.Render("preview") + st.Label.Render(" · sent exactly as shown · ") + v.count(v.preview)
	// The API counts the recipients only when it creates the broadcast; the last
	// one's count is the nearest honest hint.
	if len(v.list) > 0 {
		head += st.Label.Render(fmt.Sprintf(" · the last broadcast had %d recipients", v.list[0].Total))
	}
	lines := []string{lipgloss.NewStyle().Width(v.w).Render(head)}
	if components.MaskSecrets(v.preview) != v.preview {
		lines = append(lines, st.Alarm.Render("this text looks like it holds a secret: every user will read it"))
	}
	top := strings.Join(lines, "\n")
	body := strings.Split(lipgloss.NewStyle().Width(max(10, v.w-2)).Render(v.preview), "\n")
	room := max(1, v.h-lipgloss.Height(top))
	if len(body) > room {
		more := len(body) - room + 1
		body = append(body[:room-1:room-1], st.Muted.Render(fmt.Sprintf("… %d more lines, sent too", more)))
	}
	return top + "\n" + st.Pane.Render(strings.Join(body, "\n"))
}
