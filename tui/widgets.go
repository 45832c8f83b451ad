package tui

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/styles"
)

// column is a table column that takes a share of the spare width above its minimum.
// When the minimums do not fit, columns with the highest drop rank are hidden first
// (width 0, which bubbles/table skips); rank 0 is never hidden.
type column struct {
	title string
	min   int
	flex  int
	drop  int
}

func newTable(st styles.Styles, cols []column) table.Model {
	t := table.New(table.WithColumns(fitColumns(cols, 80)), table.WithFocused(true))
	s := table.DefaultStyles()
	s.Header = st.TableHead
	s.Cell = st.TableCell
	s.Selected = st.TableSel
	t.SetStyles(s)
	return t
}

// fitColumns spreads width over the columns; each cell has one space of padding on
// either side in the default table styles, hence the 2 per column.
func fitColumns(cols []column, width int) []table.Column {
	hidden := make([]bool, len(cols))
	used := 0
	for _, c := range cols {
		used += c.min + 2
	}
	for used > width {
		worst := -1
		for i, c := range cols {
			if !hidden[i] && c.drop > 0 && (worst < 0 || c.drop > cols[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		hidden[worst] = true
		used -= cols[worst].min + 2
	}
	flex := 0
	for i, c := range cols {
		if !hidden[i] {
			flex += c.flex
		}
	}
	spare := max(0, width-used)
	out := make([]table.Column, len(cols))
	given := 0
	for i, c := range cols {
		if hidden[i] {
			out[i] = table.Column{Title: c.title}
			continue
		}
		w := c.min
		if flex > 0 && c.flex > 0 {
			extra := spare * c.flex / flex
			w += extra
			given += extra
		}
		out[i] = table.Column{Title: c.title, Width: w}
	}
	// Rounding leftovers go to the last flexible column so rows fill the width.
	for i := len(cols) - 1; i >= 0; i-- {
		if cols[i].flex > 0 && !hidden[i] {
			out[i].Width += spare - given
			break
		}
	}
	return out
}

var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the last width values scaled between zero (or the minimum, if
// negative) and the maximum; a flat series draws as a flat line.
func sparkline(vals []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	lo, hi := 0.0, 0.0
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", width-len(vals)))
	for _, v := range vals {
		i := 0
		if hi > lo {
			i = int((v - lo) / (hi - lo) * float64(len(sparkBlocks)-1))
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return humanDuration(now.Sub(t)) + " ago"
}

func humanDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func money(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }

// secretRE finds values that look like credentials. The daemon masks root passwords
// before storing messages; this is a second line in case a message slipped through.
var secretRE = regexp.MustCompile(`(?i)((?:root[ _-]?)?(?:(?:password|passwd|pass|pwd|secret|token)\b|비밀번호)\s*[:=]?\s*)([^\s•:=]\S*)`)

const mask = "••••••••"

func maskSecrets(s string) string { return secretRE.ReplaceAllString(s, "${1}"+mask) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func containsFold(hay, needle string) bool {
	return needle == "" || strings.Contains(strings.ToLower(hay), strings.ToLower(needle))
}

// orderDetail renders an order with its attempt history and errors for a side pane.
func orderDetail(st styles.Styles, o api.Order, now time.Time, width int) string {
	var b strings.Builder
	row := func(k, v string) {
		if v == "" {
			return
		}
		fmt.Fprintf(&b, "%s %s\n", st.Label.Render(fmt.Sprintf("%-10s", k)), v)
	}
	b.WriteString(st.Title.Render(fmt.Sprintf("order #%d", o.OrderID)) + "\n")
	status := o.Status
	if o.WaitingRetry {
		status += " (waiting for retry)"
	}
	row("status", statusStyle(st, o.Status).Render(status))
	row("user", fmt.Sprintf("%d (telegram %s)", o.UserID, o.TelegramUserID))
	row("plan", fmt.Sprintf("%s in %s via %s", o.SpecID, o.Region, o.Provider))
	row("price", money(o.PricePaid))
	row("attempts", fmt.Sprint(o.Attempts))
	if o.NextRetryAt != nil {
		row("retry in", humanDuration(o.NextRetryAt.Sub(now)))
	}
	row("ip", deref(o.IPAddress))
	row("instance", deref(o.InstanceID))
	row("created", ago(now, o.CreatedAt))
	row("updated", ago(now, o.UpdatedAt))
	if e := deref(o.ErrorMessage); e != "" {
		b.WriteString(st.Alarm.Render("error") + "\n" + lipgloss.NewStyle().Width(width).Render(oneLine(e)) + "\n")
	}
	b.WriteString("\n" + st.Title.Render("history") + "\n")
	if len(o.History) == 0 {
		b.WriteString(st.Muted.Render("no history") + "\n")
	}
	for _, h := range o.History {
		line := fmt.Sprintf("%s  %-15s %-12s #%d", h.At.UTC().Format("15:04:05"), h.Event, h.Status, h.Attempt)
		b.WriteString(line + "\n")
		if h.Error != "" {
			b.WriteString(lipgloss.NewStyle().Width(width).Render(st.StatusErr.Render("  ↳ "+oneLine(h.Error))) + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func statusStyle(st styles.Styles, status string) lipgloss.Style {
	switch status {
	case "active":
		return st.OK
	case "failed":
		return st.Alarm
	case "provisioning", "pending":
		return st.Warn
	default:
		return st.Muted
	}
}

// loadingLine is what a view shows before its first answer.
func loadingLine(c *common, what string) string {
	if c.down {
		return c.st.Muted.Render("no " + what + " yet: waiting for the daemon")
	}
	return c.spin.View() + " loading " + what + "…"
}

// keepCursor puts the cursor back on a row after the rows changed: bubbles/table
// leaves it at -1 once the table has been empty, which would ignore enter later.
func keepCursor(t *table.Model) {
	if n := len(t.Rows()); n > 0 && (t.Cursor() < 0 || t.Cursor() >= n) {
		t.SetCursor(min(max(t.Cursor(), 0), n-1))
	}
}
