package pages

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/components"
	"github.com/hangarhq/hangar/tui/styles"
)

// orderDetail renders an order with its attempt history and errors for a side pane.
func orderDetail(c *common.Common, o api.Order, width int) string {
	st, now := c.St, c.Now()
	// The pane is narrow at 80 columns: lines wrap at spaces rather than lose their end.
	wrap := lipgloss.NewStyle().Width(width)
	var b strings.Builder
	row := func(k, v string) {
		if v == "" {
			return
		}
		b.WriteString(wrap.Render(st.Label.Render(fmt.Sprintf("%-10s", k))+" "+v) + "\n")
	}
	b.WriteString(st.Title.Render(fmt.Sprintf("order #%d", o.OrderID)) + "\n")
	status := o.Status
	if o.WaitingRetry {
		status += " (waiting for retry)"
	}
	row("status", statusStyle(st, o.Status).Render(status))
	row("user", fmt.Sprintf("%d (telegram %s)", o.UserID, o.TelegramUserID))
	row("plan", fmt.Sprintf("%s in %s via %s", o.SpecID, o.Region, o.Provider))
	row("price", components.Money(o.PricePaid, c.Currency))
	row("attempts", fmt.Sprint(o.Attempts))
	if o.NextRetryAt != nil {
		row("retry in", components.HumanDuration(o.NextRetryAt.Sub(now)))
	}
	billingRows(row, o, now)
	row("ip", components.Deref(o.IPAddress))
	row("instance", components.Deref(o.InstanceID))
	row("created", components.Ago(now, o.CreatedAt))
	row("updated", components.Ago(now, o.UpdatedAt))
	if e := components.Deref(o.ErrorMessage); e != "" {
		b.WriteString(st.Alarm.Render("error") + "\n" + lipgloss.NewStyle().Width(width).Render(components.OneLine(e)) + "\n")
	}
	b.WriteString("\n" + st.Title.Render("history") + "\n")
	if len(o.History) == 0 {
		b.WriteString(st.Muted.Render("no history") + "\n")
	}
	for _, h := range o.History {
		line := fmt.Sprintf("%s  %-15s %-12s #%d", h.At.UTC().Format("15:04:05"), h.Event, h.Status, h.Attempt)
		if lipgloss.Width(line) > width {
			line = fmt.Sprintf("%s %s %s #%d", h.At.UTC().Format("15:04"), h.Event, h.Status, h.Attempt)
		}
		b.WriteString(wrap.Render(line) + "\n")
		if h.Error != "" {
			b.WriteString(lipgloss.NewStyle().Width(width).Render(st.StatusErr.Render("  ↳ "+components.OneLine(h.Error))) + "\n")
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
	case "provisioning", "pending", "suspended":
		return st.Warn
	default:
		return st.Muted
	}
}
