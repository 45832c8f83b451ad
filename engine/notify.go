package engine

import (
	"html"
	"sync"
	"time"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/i18n"
	"github.com/hangarhq/hangar/store"
)

// notes builds the Telegram messages the order lifecycle sends. They are queued in the
// same transaction as the status change they announce, so a user is told exactly what
// the store says, in the language their own messages were last answered in.
type notes struct {
	adminChat int64
	catalog   *catalog.Catalog
	lang      *i18n.Catalog
	users     languageReader
}

// languageReader is where notes find a user's language.
type languageReader interface {
	GetUserLanguage(user int64) (store.UserLanguage, error)
}

// fallbackLang serves notes built without a catalogue (in tests of one part).
var fallbackLang sync.Map // currency → *i18n.Catalog

// printer speaks to user: their /language choice, else their client's last
// language_code, else the operator default. The admin chat (user 0) gets the default.
func (n notes) printer(user int64) i18n.Printer {
	c := n.lang
	if c == nil {
		cur := ""
		if n.catalog != nil {
			cur = n.catalog.Currency
		}
		v, ok := fallbackLang.Load(cur)
		if !ok {
			v, _ = fallbackLang.LoadOrStore(cur, i18n.MustNew(i18n.Korean, cur))
		}
		c = v.(*i18n.Catalog)
	}
	if user == 0 || n.users == nil {
		return c.For(c.Default())
	}
	l, _ := n.users.GetUserLanguage(user)
	return c.For(c.Pick(l.Chosen, l.Client))
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
	p := n.printer(o.TelegramUserID)
	fields := func(pw string) []any {
		return []any{"Title", p.T("ReadyTitle", "ID", o.ID), "Plan", html.EscapeString(n.planName(o.SpecID)),
			"Region", html.EscapeString(o.Region), "IP", html.EscapeString(o.IPAddress), "Password", pw}
	}
	// Each case renders only the texts it sends: this runs once per completed order.
	// A message with the password goes to the owner's private chat (their user id),
	// whatever chat the order came from: in a group everyone would read it.
	switch password {
	case passwordUnknown:
		return htmlMessage(o.ChatID, p.T("ReadyPasswordLost", fields("")...)), false
	case "":
		msg = htmlMessage(privateChat(o), p.T("Ready", fields(store.RootPasswordPlaceholder)...))
		msg.SecretOrderID = o.ID
		return msg, false
	}
	msg = htmlMessage(privateChat(o), p.T("Ready", fields(html.EscapeString(password))...))
	msg.LogText = p.T("Ready", fields(store.PasswordMask)...)
	return msg, true
}

// privateChat is the owner's private chat with the bot (a Telegram user's private chat
// id is their user id), or the order's chat when it has no Telegram user.
func privateChat(o store.Order) int64 {
	if o.TelegramUserID != 0 {
		return o.TelegramUserID
	}
	return o.ChatID
}

// passwordUndelivered replaces a root password message Telegram refused. It carries no
// secret, so it is stored like any other note. The chat is the user's private one.
func (n notes) passwordUndelivered(id, chat int64, lost bool, window time.Duration) store.OutboxMessage {
	p := n.printer(chat)
	if lost {
		return htmlMessage(chat, p.T("PasswordUndeliveredLost", "ID", id))
	}
	return htmlMessage(chat, p.T("PasswordUndelivered", "ID", id, "Minutes", int(window.Minutes())))
}

// deadLettered tells the user, and the admin chat, that an order failed for good. A
// permanent failure (the provider refused the order itself) says that ordering the
// same again will fail the same way: "try again later" would only cost them another
// hold and another wait.
func (n notes) deadLettered(o store.Order, permanent bool) []store.OutboxMessage {
	p := n.printer(o.TelegramUserID)
	text := p.T("Failed", "ID", o.ID, "Attempts", o.Attempts, "Amount", p.Money(o.PricePaid))
	if permanent {
		text = p.T("FailedPermanent", "ID", o.ID, "Reason", html.EscapeString(o.LastError), "Amount", p.Money(o.PricePaid))
	}
	out := []store.OutboxMessage{htmlMessage(o.ChatID, text)}
	if n.adminChat != 0 {
		out = append(out, htmlMessage(n.adminChat, n.printer(0).T("DeadLetterAdmin", "ID", o.ID, "User", o.TelegramUserID,
			"Spec", html.EscapeString(o.SpecID), "Region", html.EscapeString(o.Region), "Provider", html.EscapeString(o.Provider),
			"Attempts", o.Attempts, "Error", html.EscapeString(o.LastError))))
	}
	return out
}

// terminated tells the user their server is gone (the chat command, the admin API or
// the reconciler's retry).
func (n notes) terminated(o store.Order) store.OutboxMessage {
	return htmlMessage(o.ChatID, n.printer(o.TelegramUserID).T("Terminated", "ID", o.ID, "IP", html.EscapeString(o.IPAddress)))
}

// terminateFailed says a deletion is being retried.
func (n notes) terminateFailed(o store.Order) store.OutboxMessage {
	return htmlMessage(o.ChatID, n.printer(o.TelegramUserID).T("TerminateFailed", "ID", o.ID))
}

func (n notes) cancelled(o store.Order) []store.OutboxMessage {
	if o.ChatID == 0 {
		return nil
	}
	return []store.OutboxMessage{htmlMessage(o.ChatID, n.printer(o.TelegramUserID).T("OrderCancelledNote", "ID", o.ID))}
}
