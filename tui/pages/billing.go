package pages

import (
	"fmt"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/components"
)

// billingRows adds an order's paid time to its detail (issue 17): until when it is
// paid and which period that is, whether it renews, when a suspended server is
// deleted, and a provider operation still waiting in the queue.
func billingRows(row func(k, v string), o api.Order, now time.Time) {
	if o.PaidUntil == nil {
		return
	}
	when := func(t time.Time) string {
		rel := "in " + components.HumanDuration(t.Sub(now))
		if !t.After(now) {
			rel = components.HumanDuration(now.Sub(t)) + " ago"
		}
		return t.UTC().Format("2006-01-02 15:04") + " (" + rel + ")"
	}
	row("paid until", when(*o.PaidUntil))
	period := fmt.Sprintf("%d", o.Period)
	if !o.AutoRenew {
		period += ", auto-renew off: ends then"
	}
	row("period", period)
	if o.GraceUntil != nil {
		row("deleted at", when(*o.GraceUntil))
	}
	if o.Operation != "" {
		row("provider", o.Operation+" queued")
	} else if o.PoweredOff {
		row("power", "off")
	}
}
