package pages

import (
	"fmt"
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

type commentsMsg struct {
	comments  []api.Comment
	inquiries []api.Inquiry
	err       error
}

func (m commentsMsg) FetchErr() error { return m.err }

// moderationShown is how many comments and inquiries the view reads, newest first.
const moderationShown = 200

// moderation lists the blog's comments and contact-form inquiries, newest first: a
// comment can be deleted (confirmed, naming it) and an inquiry marked read. Rows are
// keyed by id, so a new comment arriving above does not move the cursor off the one
// the operator is reading.
type moderation struct {
	tableView
	inquiriesShown bool
	comments       []api.Comment
	inquiries      []api.Inquiry
	pane           viewport.Model
	open           bool
}

var (
	commentCols = []components.Column{
		{Title: "id", Min: 3, Fit: true}, {Title: "when", Min: 10, Drop: 2}, {Title: "slug", Min: 10, Flex: 1, Drop: 3},
		{Title: "name", Min: 8, Drop: 1}, {Title: "comment", Min: 16, Flex: 3},
	}
	inquiryCols = []components.Column{
		{Title: "id", Min: 3, Fit: true}, {Title: "when", Min: 10, Drop: 2}, {Title: "state", Min: 5},
		{Title: "from", Min: 10, Flex: 1, Drop: 1}, {Title: "message", Min: 16, Flex: 3},
	}
)

func NewModeration(c *common.Common) *moderation {
	return &moderation{tableView: newTableView(c, commentCols), pane: viewport.New(40, 10)}
}

func (v *moderation) Title() string      { return "comments" }
func (v *moderation) Modal() bool        { return v.open }
func (v *moderation) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }

func (v *moderation) Keys() []key.Binding {
	km := v.c.Km
	act := km.Delete
	if v.inquiriesShown {
		act = km.MarkRead
	}
	if v.open {
		return []key.Binding{km.Back, act}
	}
	return []key.Binding{km.Up, km.Down, km.Detail, km.SwitchList, act}
}

func (v *moderation) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		cs, err := d.Comments(ctx, moderationShown)
		if err != nil {
			return commentsMsg{err: err}
		}
		qs, err := d.Inquiries(ctx, moderationShown)
		return commentsMsg{comments: cs, inquiries: qs, err: err}
	}
}

func (v *moderation) Update(msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(commentsMsg); ok {
		v.err = msg.err
		if msg.err == nil {
			v.comments, v.inquiries, v.loaded = msg.comments, msg.inquiries, true
			v.rebuild()
		}
	}
	return nil
}

func (v *moderation) rebuild() {
	now := v.c.Now()
	var rows []components.Row
	if v.inquiriesShown {
		for _, q := range v.inquiries {
			state := "new"
			if q.Read {
				state = "read"
			}
			cells := []string{strconv.FormatUint(q.ID, 10), components.Ago(now, q.CreatedAt), state,
				components.OneLine(q.Name + " <" + q.Email + ">"), components.OneLine(q.Message)}
			if components.ContainsFold(strings.Join(cells, " "), v.filt) {
				rows = append(rows, components.Row{Key: cells[0], Cells: cells})
			}
		}
	} else {
		for _, cm := range v.comments {
			cells := []string{strconv.FormatUint(cm.ID, 10), components.Ago(now, cm.CreatedAt), cm.Slug,
				components.OneLine(cm.Name), components.OneLine(cm.Content)}
			if components.ContainsFold(strings.Join(cells, " "), v.filt) {
				rows = append(rows, components.Row{Key: cells[0], Cells: cells})
			}
		}
	}
	v.tbl.SetRows(rows)
	if v.open {
		v.setPane()
	}
}

func (v *moderation) selectedComment() (api.Comment, bool) {
	return components.Selected(&v.tbl, v.comments, func(c api.Comment) string { return strconv.FormatUint(c.ID, 10) })
}

func (v *moderation) selectedInquiry() (api.Inquiry, bool) {
	return components.Selected(&v.tbl, v.inquiries, func(q api.Inquiry) string { return strconv.FormatUint(q.ID, 10) })
}

func (v *moderation) HandleKey(msg tea.KeyMsg) tea.Cmd {
	km := v.c.Km
	d, ctx := v.c.D, v.c.Ctx
	switch {
	case detailKey(msg, km, &v.open, v.tbl.Len(), &v.pane, func() { v.SetSize(v.w, v.h) }, v.setPane):
		return nil
	case key.Matches(msg, km.SwitchList) && !v.open:
		v.inquiriesShown = !v.inquiriesShown
		cols := commentCols
		if v.inquiriesShown {
			cols = inquiryCols
		}
		v.tbl = components.NewTable(v.c.St, v.c.Km, cols)
		v.SetSize(v.w, v.h)
		v.rebuild()
		return nil
	case key.Matches(msg, km.Delete) && !v.inquiriesShown:
		cm, ok := v.selectedComment()
		if !ok {
			return nil
		}
		id := cm.ID
		return common.AskConfirm(fmt.Sprintf("Delete comment #%d by %s on %s (%q)? This cannot be undone.", id,
			components.Truncate(components.OneLine(cm.Name), 20), components.Truncate(cm.Slug, 30),
			components.Truncate(components.OneLine(cm.Content), 30)), func() tea.Msg {
			err := d.DeleteComment(ctx, id)
			return common.ActionDoneMsg{Text: fmt.Sprintf("comment #%d deleted", id), Err: common.WrapAction(err, "delete comment #%d", id)}
		})
	case key.Matches(msg, km.MarkRead) && v.inquiriesShown:
		q, ok := v.selectedInquiry()
		if !ok {
			return nil
		}
		if q.Read {
			return common.Notice(false, "inquiry #%d is already read", q.ID)
		}
		if v.c.ReadOnly() {
			return common.Notice(true, "read-only: this console is a viewer's, so inquiry #%d was not marked", q.ID)
		}
		// Marking read changes nothing a reader sees: no question, but the status line
		// names the inquiry marked.
		id := q.ID
		return func() tea.Msg {
			_, err := d.MarkInquiryRead(ctx, id)
			return common.ActionDoneMsg{Text: fmt.Sprintf("inquiry #%d marked read", id), Err: common.WrapAction(err, "mark inquiry #%d read", id)}
		}
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

func (v *moderation) SetSize(w, h int) {
	v.w, v.h = w, h
	tw := w
	if v.open {
		tw = w * 55 / 100
		v.pane.Width, v.pane.Height = w-tw-2, h-1
	}
	v.fitTable(tw)
}

// setPane shows the selected comment or inquiry whole.
func (v *moderation) setPane() {
	st, now, w := v.c.St, v.c.Now(), v.pane.Width
	wrap := lipgloss.NewStyle().Width(w)
	var b strings.Builder
	row := func(k, val string) {
		b.WriteString(wrap.Render(st.Label.Render(fmt.Sprintf("%-8s", k))+" "+val) + "\n")
	}
	if v.inquiriesShown {
		q, ok := v.selectedInquiry()
		if !ok {
			v.pane.SetContent("")
			return
		}
		b.WriteString(st.Title.Render(fmt.Sprintf("inquiry #%d", q.ID)) + "\n")
		row("from", q.Name)
		row("e-mail", q.Email)
		row("sent", components.Ago(now, q.CreatedAt))
		row("state", map[bool]string{true: "read", false: "new"}[q.Read])
		b.WriteString("\n" + wrap.Render(q.Message))
	} else {
		cm, ok := v.selectedComment()
		if !ok {
			v.pane.SetContent("")
			return
		}
		b.WriteString(st.Title.Render(fmt.Sprintf("comment #%d", cm.ID)) + "\n")
		row("slug", cm.Slug)
		row("name", cm.Name)
		row("posted", components.Ago(now, cm.CreatedAt))
		if cm.EditedAt != nil {
			row("edited", components.Ago(now, *cm.EditedAt))
		}
		b.WriteString("\n" + wrap.Render(cm.Content))
	}
	v.pane.SetContent(b.String())
}

func (v *moderation) Render() string {
	st := v.c.St
	unread := 0
	for _, q := range v.inquiries {
		if !q.Read {
			unread++
		}
	}
	showing, other := "comments", "inquiries"
	if v.inquiriesShown {
		showing, other = other, showing
	}
	head := st.Value.Render(showing) + st.Label.Render(fmt.Sprintf(" · %d comments · %d inquiries, ", len(v.comments), len(v.inquiries)))
	if unread > 0 {
		head += st.Warn.Render(fmt.Sprintf("%d unread", unread))
	} else {
		head += st.Label.Render("none unread")
	}
	head += st.Label.Render(" · " + v.c.Km.SwitchList.Help().Key + " " + other)
	head = v.withErr(head)
	var body string
	switch {
	case !v.loaded && v.err == nil:
		body = v.c.LoadingLine(showing)
	case v.tbl.Len() == 0:
		body = st.Muted.Render("no " + showing)
	default:
		body = v.tbl.View()
	}
	if v.open {
		body = lipgloss.JoinHorizontal(lipgloss.Top, lipgloss.NewStyle().Width(v.tbl.Width()).Render(body), st.Pane.Render(v.pane.View()))
	}
	return head + "\n" + body
}
