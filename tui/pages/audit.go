package pages

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type auditMsg struct {
	page api.AuditPage
	err  error
}

func (m auditMsg) FetchErr() error { return m.err }

// auditKeep is how many of the newest entries the view reads; older ones are a
// GET /admin/audit?before= away.
const auditKeep = 200

// audit shows who changed what, newest first: every change made through the admin
// API, refusals included, with its outcome.
type audit struct {
	tableView
	entries []api.AuditEntry
}

var auditCols = []components.Column{
	{Title: "#", Min: 3, Fit: true, Drop: 4}, {Title: "when", Min: 10, Fit: true, Drop: 3}, {Title: "who", Min: 14, Flex: 2},
	{Title: "what", Min: 18, Flex: 3}, {Title: "outcome", Min: 8, Fit: true}, {Title: "detail", Min: 10, Flex: 1, Drop: 1},
}

func NewAudit(c *common.Common) *audit { return &audit{tableView: newTableView(c, auditCols)} }

func (v *audit) Title() string       { return "audit" }
func (v *audit) Modal() bool         { return false }
func (v *audit) SetFilter(s string)  { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *audit) Keys() []key.Binding { return []key.Binding{v.c.Km.Up, v.c.Km.Down} }

func (v *audit) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		p, err := d.Audit(ctx, auditKeep, 0)
		return auditMsg{page: p, err: err}
	}
}

func (v *audit) Update(msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(auditMsg); ok {
		v.err = msg.err
		if msg.err == nil {
			v.entries, v.loaded = msg.page.Entries, true
			v.rebuild()
		}
	}
	return nil
}

// outcome reads as the operator would say it: done, or why not.
func auditOutcome(e api.AuditEntry) string {
	switch {
	case e.Status < 300:
		return "ok"
	case e.Code == "read_only":
		return "refused: viewer"
	case e.Code != "":
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return strconv.Itoa(e.Status)
}

func (v *audit) rebuild() {
	now := v.c.Now()
	var rows []components.Row
	for _, e := range v.entries {
		cells := []string{strconv.FormatUint(e.ID, 10), components.Ago(now, e.At), components.OneLine(e.Actor),
			e.Method + " " + components.OneLine(e.Path), auditOutcome(e), components.MaskSecrets(components.OneLine(e.Detail))}
		if !components.ContainsFold(strings.Join(cells, " "), v.filt) {
			continue
		}
		rows = append(rows, components.Row{Key: cells[0], Cells: cells})
	}
	v.tbl.SetRows(rows)
}

func (v *audit) HandleKey(msg tea.KeyMsg) tea.Cmd {
	v.tbl.Update(msg)
	return nil
}

func (v *audit) Render() string {
	st := v.c.St
	refused := 0
	for _, e := range v.entries {
		if e.Status >= 400 {
			refused++
		}
	}
	head := st.Label.Render(fmt.Sprintf("changes made by people, newest first · %d shown · %d refused or failed", len(v.tbl.Rows()), refused))
	head = v.withErr(head)
	switch {
	case !v.loaded && v.err == nil:
		return head + "\n" + v.c.LoadingLine("audit log")
	case len(v.tbl.Rows()) == 0:
		return head + "\n" + st.Muted.Render("no changes recorded yet")
	}
	return head + "\n" + v.tbl.View()
}
