package pages

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
)

type reconcileMsg struct {
	rep api.ReconcileReport
	err error
}

func (m reconcileMsg) FetchErr() error { return m.err }

// reconcileRanMsg carries the report a run answered, shown before the next read.
type reconcileRanMsg struct{ rep api.ReconcileReport }

// reconcile shows the reconciler's last findings: servers at the providers that are a
// second server of one order (duplicates) or belong to no live order (orphans), and
// what was done with each. r runs the reconciler now; the question says what it will
// delete, as the daemon decides it (duplicates always, orphans only when allowed).
type reconcile struct {
	tableView
	rep api.ReconcileReport
}

var reconcileCols = []components.Column{
	{Title: "kind", Min: 9}, {Title: "provider", Min: 8, Drop: 3}, {Title: "server", Min: 8, Flex: 1, Fit: true},
	{Title: "ip", Min: 13, Drop: 4}, {Title: "order", Min: 6, Fit: true, Drop: 2}, {Title: "state", Min: 8},
	{Title: "reason", Min: 12, Flex: 3, Drop: 1},
}

func NewReconcile(c *common.Common) *reconcile {
	return &reconcile{tableView: newTableView(c, reconcileCols)}
}

func (v *reconcile) Title() string      { return "reconciler" }
func (v *reconcile) Modal() bool        { return false }
func (v *reconcile) SetFilter(s string) { v.filt = s; v.rebuild(); v.tbl.Top() }
func (v *reconcile) Keys() []key.Binding {
	return []key.Binding{v.c.Km.Up, v.c.Km.Down, v.c.Km.Reconcile}
}

func (v *reconcile) Refresh() tea.Cmd {
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		rep, err := d.Reconcile(ctx)
		return reconcileMsg{rep: rep, err: err}
	}
}

func (v *reconcile) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case reconcileMsg:
		v.err = msg.err
		if msg.err == nil {
			v.rep, v.loaded = msg.rep, true
			v.rebuild()
		}
	case reconcileRanMsg:
		v.rep, v.loaded = msg.rep, true
		v.rebuild()
	}
	return nil
}

func findingState(f api.ReconcileFinding) string {
	switch {
	case f.Error != "":
		return "error"
	case f.Deleted:
		return "deleted"
	}
	return "listed"
}

func (v *reconcile) rebuild() {
	var rows []components.Row
	add := func(kind string, fs []api.ReconcileFinding) {
		for _, f := range fs {
			order := "-"
			if f.OrderID > 0 {
				order = "#" + strconv.FormatInt(f.OrderID, 10)
			}
			reason := f.Reason
			if f.OrderStatus != "" {
				reason += " (order " + f.OrderStatus + ")"
			}
			if f.Kept != "" {
				reason += "; kept " + f.Kept
			}
			if f.Error != "" {
				reason += ": " + components.MaskSecrets(components.OneLine(f.Error))
			}
			cells := []string{kind, f.Provider, f.InstanceID, f.IPv4, order, findingState(f), reason}
			if components.ContainsFold(strings.Join(cells, " ")+" "+f.Label, v.filt) {
				rows = append(rows, components.Row{Key: kind + "/" + f.Provider + "/" + f.InstanceID, Cells: cells})
			}
		}
	}
	add("duplicate", v.rep.Duplicates)
	add("orphan", v.rep.Orphans)
	v.tbl.SetRows(rows)
}

// servers names the findings not yet deleted: "linode 60123457, vultr a1b2…".
func servers(fs []api.ReconcileFinding) (names []string) {
	for _, f := range fs {
		if !f.Deleted {
			names = append(names, f.Provider+" "+f.InstanceID)
		}
	}
	return names
}

func nameList(names []string, n int) string {
	if len(names) > n {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.Join(names, ", ")
}

func (v *reconcile) HandleKey(msg tea.KeyMsg) tea.Cmd {
	if !key.Matches(msg, v.c.Km.Reconcile) {
		v.tbl.Update(msg)
		return nil
	}
	dups, orphans := servers(v.rep.Duplicates), servers(v.rep.Orphans)
	prompt := "Reconcile now? Deletes duplicate servers of live orders"
	if len(dups) > 0 {
		prompt += fmt.Sprintf(" (now: %s)", nameList(dups, 3))
	}
	switch {
	case v.rep.DeleteOrphans && len(orphans) > 0:
		prompt += fmt.Sprintf(" and orphans (now: %s)", nameList(orphans, 3))
	case v.rep.DeleteOrphans:
		prompt += " and orphans"
	default:
		prompt += "; orphans only reported"
	}
	d, ctx := v.c.D, v.c.Ctx
	return func() tea.Msg {
		return common.ConfirmMsg{Prompt: prompt + ".", Working: "reconciling…", Run: func() tea.Msg {
			rep, err := d.RunReconcile(ctx)
			if err != nil {
				return common.ActionDoneMsg{Err: common.WrapAction(err, "reconcile")}
			}
			return tea.Sequence(func() tea.Msg { return reconcileRanMsg{rep: rep} }, func() tea.Msg {
				return common.ActionDoneMsg{Text: fmt.Sprintf("reconciled: %s and %s found, %d servers deleted",
					plural(len(rep.Duplicates), "duplicate"), plural(len(rep.Orphans), "orphan"), rep.Deleted)}
			})()
		}}
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (v *reconcile) SetSize(w, h int) {
	v.w, v.h = w, h
	// The head wraps to two lines at 80 columns.
	v.tbl.SetSize(w, max(3, h-2-len(v.rep.Errors)))
}

func (v *reconcile) Render() string {
	st := v.c.St
	r := v.rep
	var head string
	if r.At.IsZero() {
		head = st.Label.Render("not run yet")
	} else {
		head = st.Label.Render("last run " + components.Ago(v.c.Now(), r.At))
	}
	if len(r.Providers) > 0 {
		head += st.Label.Render(fmt.Sprintf(" · %s: %d servers", strings.Join(r.Providers, ", "), r.Servers))
	}
	dupStyle, orphStyle := st.OK, st.OK
	if len(servers(r.Duplicates)) > 0 {
		dupStyle = st.Alarm
	}
	if len(servers(r.Orphans)) > 0 {
		orphStyle = st.Warn
	}
	head += st.Label.Render(" · ") + dupStyle.Render(plural(len(r.Duplicates), "duplicate")) +
		st.Label.Render(" · ") + orphStyle.Render(plural(len(r.Orphans), "orphan")) +
		st.Label.Render(fmt.Sprintf(" · %d deleted", r.Deleted))
	if !r.DeleteOrphans {
		head += st.Label.Render(" · orphans reported only")
	}
	head = lipgloss.NewStyle().Width(v.w).Render(v.withErr(head))
	for _, e := range r.Errors {
		head += "\n" + st.StatusErr.Render(components.MaskSecrets(components.OneLine(e)))
	}
	switch {
	case !v.loaded && v.err == nil:
		return head + "\n" + v.c.LoadingLine("findings")
	case v.tbl.Len() == 0:
		return head + "\n" + st.OK.Render("no duplicate or orphaned servers")
	}
	return head + "\n" + v.tbl.View()
}
