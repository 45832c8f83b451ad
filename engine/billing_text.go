package engine

import (
	"html"
	"time"

	"github.com/hangarhq/hangar/engine/i18n"
	"github.com/hangarhq/hangar/store"
)

// Every message billing sends is built here, from the i18n catalogues (ids Billing*,
// Renew*, AutoRenew*), in the language of the order's user; the admin chat's in the
// operator's.

func billingTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// topUpHint says how to add money: /topup in Stars, or the operator.
func topUpHint(p i18n.Printer, user int64) string { return p.T("TopUpHint", "User", user) }

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
	p := n.printer(o.TelegramUserID)
	return n.user(o, p.T("BillingRenewed", "ID", o.ID, "Period", o.Period, "Amount", p.Money(o.PricePaid), "Until", billingTime(o.PaidUntil)))
}

// billingReminder: the balance will not pay the next period.
// billingReminder: the balance as the user sees it, and what is missing for this
// renewal once the renewals due before it (left: what they leave) are paid.
func (n notes) billingReminder(o store.Order, balance, left int64) []store.OutboxMessage {
	p := n.printer(o.TelegramUserID)
	return n.user(o, p.T("BillingReminder", "ID", o.ID, "Until", billingTime(o.PaidUntil), "Price", p.Money(o.PricePaid),
		"Balance", p.Money(balance), "Missing", p.Money(o.PricePaid-max(left, 0)), "Hint", topUpHint(p, o.UserID)))
}

// billingSuspended: the renewal could not be paid.
func (n notes) billingSuspended(o store.Order, available int64) []store.OutboxMessage {
	p := n.printer(o.TelegramUserID)
	out := n.user(o, p.T("BillingSuspended", "ID", o.ID, "Price", p.Money(o.PricePaid), "Balance", p.Money(available),
		"Missing", p.Money(o.PricePaid-available), "Grace", billingTime(o.GraceUntil), "Hint", topUpHint(p, o.UserID)))
	a := n.printer(0)
	return append(out, n.admin(a.T("BillingSuspendedAdmin", "ID", o.ID, "User", o.UserID, "Missing", a.Money(o.PricePaid-available),
		"Grace", billingTime(o.GraceUntil)))...)
}

// billingResumed: a top-up paid a suspended server's renewal.
func (n notes) billingResumed(o store.Order) []store.OutboxMessage {
	p := n.printer(o.TelegramUserID)
	out := n.user(o, p.T("BillingResumed", "ID", o.ID, "Amount", p.Money(o.PricePaid), "Until", billingTime(o.PaidUntil)))
	return append(out, n.admin(n.printer(0).T("BillingResumedAdmin", "ID", o.ID))...)
}

// billingEnding: the server's time is over (auto-renew off, or the grace passed).
func (n notes) billingEnding(o store.Order, graceOver bool) []store.OutboxMessage {
	why := "BillingWhyAutoRenewOff"
	if graceOver {
		why = "BillingWhyGraceOver"
	}
	p, a := n.printer(o.TelegramUserID), n.printer(0)
	out := n.user(o, p.T("BillingEnding", "ID", o.ID, "Why", p.T(why)))
	return append(out, n.admin(a.T("BillingEndingAdmin", "ID", o.ID, "Why", a.T(why)))...)
}

// billingTerminated: the provider confirmed the deletion.
func (n notes) billingTerminated(o store.Order) []store.OutboxMessage {
	out := n.user(o, n.printer(o.TelegramUserID).T("BillingTerminated", "ID", o.ID, "IP", html.EscapeString(o.IPAddress)))
	return append(out, n.admin(n.printer(0).T("BillingTerminatedAdmin", "ID", o.ID))...)
}

// serverGone tells the owner and the admin that the provider no longer has the server
// of an order, which is therefore terminated.
func (n notes) serverGone(o store.Order) []store.OutboxMessage {
	out := n.user(o, n.printer(o.TelegramUserID).T("ServerGone", "ID", o.ID, "IP", html.EscapeString(o.IPAddress)))
	return append(out, n.admin(n.printer(0).T("ServerGoneAdmin", "ID", o.ID, "Instance", html.EscapeString(o.InstanceID)))...)
}

// billingAutoRenew answers /autorenew.
func (n notes) billingAutoRenew(o store.Order) string {
	p := n.printer(o.TelegramUserID)
	if o.AutoRenewOff {
		return p.T("AutoRenewOff", "ID", o.ID, "Until", billingTime(o.PaidUntil))
	}
	return p.T("AutoRenewOn", "ID", o.ID, "Until", billingTime(o.PaidUntil))
}

// billingRenewRefused answers a /renew the balance cannot pay.
func (n notes) billingRenewRefused(o store.Order, available int64) string {
	p := n.printer(o.TelegramUserID)
	return p.T("RenewRefused", "ID", o.ID, "Price", p.Money(o.PricePaid), "Balance", p.Money(available),
		"Missing", p.Money(o.PricePaid-available), "Hint", topUpHint(p, o.UserID))
}

// opDeadLettered tells the admin chat that a provider operation gave up.
func (n notes) opDeadLettered(o store.Order, op string) []store.OutboxMessage {
	return n.admin(n.printer(0).T("OpDeadLetterAdmin", "Op", html.EscapeString(op), "ID", o.ID, "Provider", html.EscapeString(o.Provider),
		"Instance", html.EscapeString(o.InstanceID), "Attempts", o.OpAttempts+1, "Error", html.EscapeString(o.LastError)))
}

// billingStatus is the paid time /status shows.
func (n notes) billingStatus(o store.Order) string {
	p := n.printer(o.TelegramUserID)
	switch {
	case o.PaidUntil.IsZero():
		return ""
	case o.Status == store.OrderSuspended:
		return "\n" + p.T("BillingStatusSuspended", "Until", billingTime(o.PaidUntil), "Grace", billingTime(o.GraceUntil), "ID", o.ID)
	case o.Status != store.OrderActive:
		return ""
	case o.AutoRenewOff:
		return "\n" + p.T("BillingStatusAutoRenewOff", "Until", billingTime(o.PaidUntil), "Period", o.Period)
	}
	return "\n" + p.T("BillingStatusRenewing", "Until", billingTime(o.PaidUntil), "Period", o.Period)
}

// billingRenewedNow answers a /renew that was paid.
func (n notes) billingRenewedNow(o store.Order) string {
	p := n.printer(o.TelegramUserID)
	id := "RenewedNow"
	if o.Op == store.OpPowerOn {
		id = "RenewedNowPoweringOn"
	}
	return p.T(id, "ID", o.ID, "Amount", p.Money(o.PricePaid), "Until", billingTime(o.PaidUntil))
}

// billingNotRenewable answers /renew or /autorenew for an order with no server to pay for.
func (n notes) billingNotRenewable(o store.Order, status string) string {
	p := n.printer(o.TelegramUserID)
	if o.Op == store.OpDelete {
		return p.T("NotRenewableDeleting", "ID", o.ID)
	}
	return p.T("NotRenewable", "ID", o.ID, "Status", status)
}
