package engine

import (
	"fmt"
	"html"
	"strconv"
	"time"

	"github.com/hangarhq/hangar/store"
)

// Every message billing sends is built here, so that they can be translated in one
// place (issue 17's languages).

// formatMoney writes minor units in the catalogue's format: digits grouped by
// thousands, then the currency code.
func formatMoney(currency string, n int64) string {
	s := strconv.FormatInt(n, 10)
	var grouped []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			grouped = append(grouped, ',')
		}
		grouped = append(grouped, c)
	}
	return string(grouped) + " " + html.EscapeString(currency)
}

func (n notes) money(v int64) string {
	cur := ""
	if n.catalog != nil {
		cur = n.catalog.Currency
	}
	return formatMoney(cur, v)
}

func billingTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// topUpHint says how to add money; the Stars top-up will join it.
const topUpHint = "Ask the operator for a top-up (your user id is <code>%d</code>); /balance shows what you have."

func (n notes) admin(text string) []store.OutboxMessage {
	if n.adminChat == 0 {
		return nil
	}
	return []store.OutboxMessage{htmlMessage(n.adminChat, text)}
}

func (n notes) user(o store.Order, text string) []store.OutboxMessage {
	if o.ChatID == 0 {
		return nil
	}
	return []store.OutboxMessage{htmlMessage(o.ChatID, text)}
}

// billingRenewed: a period was paid from the balance.
func (n notes) billingRenewed(o store.Order) []store.OutboxMessage {
	return n.user(o, fmt.Sprintf("🔁 Order #%d renewed: period %d paid (%s), the server runs until %s.",
		o.ID, o.Period, n.money(o.PricePaid), billingTime(o.PaidUntil)))
}

// billingReminder: the balance will not pay the next period.
func (n notes) billingReminder(o store.Order, available int64) []store.OutboxMessage {
	return n.user(o, fmt.Sprintf("⏰ The server of order #%d is paid until %s. Renewing it costs %s and your balance is %s: <b>%s missing</b>.\n"+
		"Without it the server is switched off at that time and deleted after the grace period.\n"+topUpHint,
		o.ID, billingTime(o.PaidUntil), n.money(o.PricePaid), n.money(available), n.money(o.PricePaid-available), o.UserID))
}

// billingSuspended: the renewal could not be paid.
func (n notes) billingSuspended(o store.Order, available int64) []store.OutboxMessage {
	out := n.user(o, fmt.Sprintf("⏸ The server of order #%d is <b>suspended</b>: renewing it costs %s and your balance is %s (%s missing). "+
		"It is switched off now and deleted at %s unless the balance pays the renewal before then; it comes back on by itself when it does.\n"+topUpHint,
		o.ID, n.money(o.PricePaid), n.money(available), n.money(o.PricePaid-available), billingTime(o.GraceUntil), o.UserID))
	return append(out, n.admin(fmt.Sprintf("⏸ Order #%d suspended (user <code>%d</code>, %s missing); deleted at %s unless paid.",
		o.ID, o.UserID, n.money(o.PricePaid-available), billingTime(o.GraceUntil)))...)
}

// billingResumed: a top-up paid a suspended server's renewal.
func (n notes) billingResumed(o store.Order) []store.OutboxMessage {
	out := n.user(o, fmt.Sprintf("▶️ Order #%d renewed (%s): its server is switched back on and runs until %s.",
		o.ID, n.money(o.PricePaid), billingTime(o.PaidUntil)))
	return append(out, n.admin(fmt.Sprintf("▶️ Order #%d paid during its grace; powering it back on.", o.ID))...)
}

// billingEnding: the server's time is over (auto-renew off, or the grace passed).
func (n notes) billingEnding(o store.Order, graceOver bool) []store.OutboxMessage {
	why := "its paid period ended and auto-renew is off"
	if graceOver {
		why = "its grace period ended unpaid"
	}
	out := n.user(o, fmt.Sprintf("⌛ The server of order #%d is being deleted: %s.", o.ID, why))
	return append(out, n.admin(fmt.Sprintf("⌛ Order #%d ends: %s.", o.ID, why))...)
}

// billingTerminated: the provider confirmed the deletion.
func (n notes) billingTerminated(o store.Order) []store.OutboxMessage {
	out := n.user(o, fmt.Sprintf("🗑 The server of order #%d (%s) was deleted.", o.ID, html.EscapeString(o.IPAddress)))
	return append(out, n.admin(fmt.Sprintf("🗑 Order #%d terminated by billing.", o.ID))...)
}

// billingAutoRenew answers /autorenew.
func (n notes) billingAutoRenew(o store.Order) string {
	if o.AutoRenewOff {
		return fmt.Sprintf("Auto-renew is <b>off</b> for order #%d: its server is deleted at %s, when its paid period ends. /renew %d pays another period; <code>/autorenew %d on</code> undoes this.",
			o.ID, billingTime(o.PaidUntil), o.ID, o.ID)
	}
	return fmt.Sprintf("Auto-renew is <b>on</b> for order #%d: each period is paid from your balance at %s and after.", o.ID, billingTime(o.PaidUntil))
}

// billingRenewRefused answers a /renew the balance cannot pay.
func (n notes) billingRenewRefused(o store.Order, available int64) string {
	return fmt.Sprintf("Renewing order #%d costs %s and your balance is %s (%s missing).\n"+topUpHint,
		o.ID, n.money(o.PricePaid), n.money(available), n.money(o.PricePaid-available), o.UserID)
}

// opDeadLettered tells the admin chat that a provider operation gave up.
func (n notes) opDeadLettered(o store.Order, op string) []store.OutboxMessage {
	return n.admin(fmt.Sprintf("🚨 <b>Dead letter</b>: %s of order #%d (%s server <code>%s</code>) failed after %d attempts: <code>%s</code>. Requeue it from the dead letter list.",
		html.EscapeString(op), o.ID, html.EscapeString(o.Provider), html.EscapeString(o.InstanceID), o.OpAttempts+1, html.EscapeString(o.LastError)))
}

// billingStatus is the paid time /status shows.
func (n notes) billingStatus(o store.Order) string {
	switch {
	case o.PaidUntil.IsZero():
		return ""
	case o.Status == store.OrderSuspended:
		return fmt.Sprintf("\nUnpaid since %s; deleted at %s unless renewed (/renew %d).", billingTime(o.PaidUntil), billingTime(o.GraceUntil), o.ID)
	case o.Status != store.OrderActive:
		return ""
	case o.AutoRenewOff:
		return fmt.Sprintf("\nPaid until %s (period %d); auto-renew is off: it ends then.", billingTime(o.PaidUntil), o.Period)
	}
	return fmt.Sprintf("\nPaid until %s (period %d); renewed from your balance.", billingTime(o.PaidUntil), o.Period)
}

// billingRenewedNow answers a /renew that was paid.
func (n notes) billingRenewedNow(o store.Order) string {
	text := fmt.Sprintf("🔁 Order #%d renewed (%s): paid until %s.", o.ID, n.money(o.PricePaid), billingTime(o.PaidUntil))
	if o.Op == store.OpPowerOn {
		text += " Its server is being switched back on."
	}
	return text
}

// billingNotRenewable answers /renew or /autorenew for an order with no server to pay for.
func (n notes) billingNotRenewable(o store.Order, status string) string {
	if o.Op == store.OpDelete {
		return fmt.Sprintf("The server of order #%d is being deleted; it can no longer be renewed.", o.ID)
	}
	return fmt.Sprintf("Order #%d is %s; only a running or suspended server can be renewed.", o.ID, status)
}
