package engine

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/store"
)

// notes builds the Telegram messages the order lifecycle sends. They are queued in the
// same transaction as the status change they announce, so a user is told exactly what
// the store says.
type notes struct {
	adminChat int64
	catalog   *catalog.Catalog
}

func (n notes) planName(specID string) string {
	if n.catalog != nil {
		if p, ok := n.catalog.Get(specID); ok {
			return p.Name
		}
	}
	return specID
}

// ready is the one message with everything the user needs. The password is either
// re-derived by the sender at send time (SecretOrderID) or, when the provider chose
// it, carried only in memory (transient) with a masked copy for the log.
func (n notes) ready(o store.Order, password string) (msg store.OutboxMessage, transient bool) {
	text := func(pw string) string {
		return fmt.Sprintf("✅ <b>Your server is ready</b> (order #%d)\n\nPlan: %s\nRegion: %s\nIP: <code>%s</code>\nRoot password: <tg-spoiler>%s</tg-spoiler>\n\nConnect: <code>ssh root@%s</code>\nChange the password after your first login.",
			o.ID, html.EscapeString(n.planName(o.SpecID)), html.EscapeString(o.Region), html.EscapeString(o.IPAddress), pw, html.EscapeString(o.IPAddress))
	}
	msg = htmlMessage(o.ChatID, text(store.RootPasswordPlaceholder))
	if password == passwordUnknown {
		msg.Text = strings.Replace(text("x"), "Root password: <tg-spoiler>x</tg-spoiler>",
			"Root password: chosen by the provider and lost in transit; reset it from the provider's console", 1)
		return msg, false
	}
	if password == "" {
		msg.SecretOrderID = o.ID
		return msg, false
	}
	msg.Text = text(html.EscapeString(password))
	msg.LogText = text(store.PasswordMask)
	return msg, true
}

// passwordUndelivered replaces a root password message Telegram refused. It carries no
// secret, so it is stored like any other note.
func (n notes) passwordUndelivered(id, chat int64, lost bool, window time.Duration) store.OutboxMessage {
	if lost {
		return htmlMessage(chat, fmt.Sprintf("⚠️ Telegram refused the message with the root password of order #%d, and hangar cannot send it again. Please reset the root password from the provider's console, or register an SSH key with /sshkey for your next server.", id))
	}
	return htmlMessage(chat, fmt.Sprintf("⚠️ Telegram refused the message with the root password of order #%d. Send <code>/password %d</code> within %d minutes of the server being ready to get it again; after that, reset it from the provider's console.", id, id, int(window.Minutes())))
}

// deadLettered tells the user, and the admin chat, that an order failed for good. A
// permanent failure (the provider refused the order itself) says that ordering the
// same again will fail the same way: "try again later" would only cost them another
// hold and another wait.
func (n notes) deadLettered(o store.Order, permanent bool) []store.OutboxMessage {
	text := fmt.Sprintf(
		"❌ <b>Server creation failed</b> (order #%d)\n\nWe tried %d times and could not create your server. Your payment of %d was released back to your balance. Please try again later or contact support.",
		o.ID, o.Attempts, o.PricePaid)
	if permanent {
		text = fmt.Sprintf(
			"❌ <b>Server creation failed</b> (order #%d)\n\nThis order cannot be fulfilled: %s.\nOrdering the same plan in the same region again will fail the same way; choose another plan or region with /plans, or contact support. Your payment of %d was released back to your balance.",
			o.ID, html.EscapeString(o.LastError), o.PricePaid)
	}
	out := []store.OutboxMessage{htmlMessage(o.ChatID, text)}
	if n.adminChat != 0 {
		out = append(out, htmlMessage(n.adminChat, fmt.Sprintf(
			"🚨 <b>Dead letter</b>: order #%d\nUser: <code>%d</code>\nPlan: %s in %s (%s)\nAttempts: %d\nLast error: <code>%s</code>",
			o.ID, o.TelegramUserID, html.EscapeString(o.SpecID), html.EscapeString(o.Region), html.EscapeString(o.Provider), o.Attempts, html.EscapeString(o.LastError))))
	}
	return out
}

func (n notes) cancelled(o store.Order) []store.OutboxMessage {
	if o.ChatID == 0 {
		return nil
	}
	return []store.OutboxMessage{htmlMessage(o.ChatID, fmt.Sprintf("Order #%d was cancelled; its payment was released to your balance.", o.ID))}
}
