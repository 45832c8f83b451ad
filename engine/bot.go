package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/i18n"
	"github.com/hangarhq/hangar/engine/telegram"
	"github.com/hangarhq/hangar/store"
)

// BotStore is what the chat commands read and write.
type BotStore interface {
	PutQuote(q store.Quote) error
	GetQuote(nonce string) (store.Quote, error)
	TakeQuote(nonce string) (store.Quote, error)
	ReturnQuote(q store.Quote) error
	GetBalance(user int64) (store.Balance, error)
	CreateOrder(o store.Order, limit store.OrderLimit, notes ...store.OutboxMessage) (store.Order, error)
	GetOrder(id int64) (store.Order, error)
	UserOrders(user int64, limit int) ([]store.Order, error)
	UpdateOrder(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, error)
	UpdateOrders(changes []store.OrderChange) ([]store.OrderResult, error)
}

// bot answers chat commands for one user. It runs inside that user's actor, after the
// rate limit, so its reads and writes for a user never race each other.
type bot struct {
	store   BotStore
	catalog *catalog.Catalog
	limit   store.OrderLimit
	clock   Clock
	// passwords says for how long, and for which providers, /password can send a root
	// password again.
	passwords passwordPolicy
	// pause is the dispatcher's: while provisioning is paused an order is taken and
	// the user told it waits, rather than "creating your server" with nothing happening.
	pause *pauseFlag
	// billing is the period /renew pays for.
	billing BillingConfig
	// lang holds the message catalogues; pay keeps invoices, payments and each user's
	// language; starsRate is minor units of the catalogue currency per Telegram Star
	// (0: /topup is off).
	lang       *i18n.Catalog
	pay        PaymentStore
	starsRate  int64
	payMetrics *paymentMetrics
	// username is the bot's own, once getMe answered (nil until then): a command
	// addressed to another bot ("/balance@other_bot" in a group, where every bot that
	// sees all messages gets it) is left to that bot.
	username atomic.Pointer[string]
}

// forAnotherBot says cmd was addressed (@name) to a bot other than this one. Until
// the bot knows its name, every command is taken as its own.
func (b *bot) forAnotherBot(addressee string) bool {
	me := b.username.Load()
	return addressee != "" && me != nil && *me != "" && !strings.EqualFold(addressee, *me)
}

// botOutcome is what handling one update produced: replies to queue with the update's
// completion, and messages for the dispatcher once it is durable.
type botOutcome struct {
	replies []store.OutboxMessage
	effects []any
	// p speaks the language of the user the update came from.
	p i18n.Printer
	// keep leaves the update in the inbox to be tried again (a payment that could not
	// be credited): its replies are sent, its commit is not made.
	keep bool
	// lang is the sender's language record as their actor holds it (nil: unknown, the
	// store could not be read); language, when set, is a changed record to commit
	// with the update.
	lang     *store.UserLanguage
	language *store.UserLanguage
	// updateID is the update being answered; a change a command makes that must not
	// be made twice is keyed on it (store.OrderChange.Once).
	updateID int64
}

func (o *botOutcome) say(chat int64, format string, args ...any) {
	o.replies = append(o.replies, htmlMessage(chat, fmt.Sprintf(format, args...)))
}

// sayT replies with catalogue message id in the user's language.
func (o *botOutcome) sayT(chat int64, id string, kv ...any) {
	o.replies = append(o.replies, htmlMessage(chat, o.p.T(id, kv...)))
}

// handle answers an update that passed the rate limit. lang is the sender's language
// record as their actor holds it (nil: unknown).
func (b *bot) handle(u *tgUpdate, lang *store.UserLanguage) botOutcome {
	out := botOutcome{lang: lang, updateID: u.ID}
	switch {
	case u.CallbackQuery != nil:
		out.p, out.language = b.printerFor(u.CallbackQuery.from(), lang)
		b.callback(u.CallbackQuery, &out)
	case u.Message != nil && u.Message.From != nil && u.Message.SuccessfulPayment != nil:
		out.p, out.language = b.printerFor(u.Message.From, lang)
		b.paid(u.Message, u.ID, &out)
	case u.Message != nil && u.Message.From != nil && u.Message.RefundedPayment != nil:
		out.p, out.language = b.printerFor(u.Message.From, lang)
		b.refundedByTelegram(u.Message, &out)
	case u.Message != nil && u.Message.From != nil:
		out.p, out.language = b.printerFor(u.Message.From, lang)
		b.command(u.Message, &out)
	}
	// A pre_checkout_query was answered on the webhook's path (see answerPreCheckout);
	// here it only leaves the inbox.
	return out
}

func (b *bot) command(m *tgMessage, out *botOutcome) {
	cmd, addressee, args := splitCommand(m.Text)
	if b.forAnotherBot(addressee) {
		return
	}
	chat, user := m.Chat.ID, m.From.ID
	switch cmd {
	case "/start":
		out.sayT(chat, "Start", "Name", html.EscapeString(m.From.FirstName), "Help", out.p.T("Help"))
	case "/help":
		out.sayT(chat, "Help")
	case "/plans":
		out.say(chat, "%s", b.plansText(out.p))
	case "/order":
		b.order(chat, user, args, out)
	case "/status":
		b.status(chat, user, args, out)
	case "/servers":
		b.servers(privately(chat, user, out), user, out)
	case "/balance":
		chat = privately(chat, user, out)
		bal, err := b.store.GetBalance(user)
		if err != nil {
			out.sayT(chat, "BalanceUnreadable")
			return
		}
		out.sayT(chat, "Balance", "Available", out.p.Money(bal.Available), "Held", out.p.Money(bal.Held))
	case "/topup":
		b.topup(chat, user, args, out)
	case "/language":
		b.language(chat, args, out)
	case "/cancel":
		b.cancel(chat, user, args, out)
	case "/terminate":
		b.terminate(chat, user, args, out)
	case "/password":
		b.password(chat, user, args, out)
	case "/sshkey":
		b.sshKey(chat, user, args, out)
	case "/renew":
		b.renew(chat, user, args, out)
	case "/autorenew":
		b.autoRenew(chat, user, args, out)
	case "":
		// Only in a private chat: in a group the bot also gets service messages (joins,
		// pins) and, without privacy mode, every message, none of them for it.
		if chat > 0 {
			out.sayT(chat, "OnlyCommands")
		}
	default:
		out.sayT(chat, "UnknownCommand", "Command", html.EscapeString(cmd))
	}
}

func (b *bot) plansText(p i18n.Printer) string {
	var sb strings.Builder
	sb.WriteString(p.T("PlansTitle"))
	for _, plan := range b.catalog.Plans {
		sb.WriteString("\n\n")
		sb.WriteString(p.T("PlanLine", "Spec", html.EscapeString(plan.SpecID), "Name", html.EscapeString(plan.Name),
			"Price", p.Money(plan.Price), "Regions", html.EscapeString(strings.Join(plan.Regions, ", "))))
	}
	example := ""
	if len(b.catalog.Plans) > 0 {
		plan := b.catalog.Plans[0]
		example = html.EscapeString(plan.SpecID + " " + plan.Regions[0])
	}
	sb.WriteString("\n\n")
	sb.WriteString(p.T("PlansFooter", "Example", example))
	return sb.String()
}

// order quotes a plan and asks for confirmation with an inline keyboard.
func (b *bot) order(chat, user int64, args string, out *botOutcome) {
	fields := strings.Fields(args)
	if len(fields) != 2 {
		out.sayT(chat, "OrderUsage")
		return
	}
	fields[0] = strings.ToLower(fields[0]) // plan ids are lower case: Sim-Nano can only mean sim-nano
	plan, err := b.catalog.Lookup(fields[0], fields[1])
	if err != nil {
		known, _ := b.catalog.Get(fields[0])
		name, region := html.EscapeString(fields[0]), html.EscapeString(fields[1])
		switch {
		case errors.Is(err, catalog.ErrUnknownRegion):
			out.sayT(chat, "UnknownRegion", "Plan", name, "Region", region, "Regions", html.EscapeString(strings.Join(known.Regions, ", ")))
		case errors.Is(err, catalog.ErrPlanUnavailable):
			out.sayT(chat, "PlanUnavailable", "Plan", name, "Provider", html.EscapeString(known.Provider))
		default:
			out.sayT(chat, "UnknownPlan", "Plan", name)
		}
		return
	}
	nonce, err := newNonce()
	if err != nil {
		out.sayT(chat, "SomethingWrong")
		return
	}
	q := store.Quote{Nonce: nonce, UserID: user, ChatID: chat, SpecID: plan.SpecID, Region: fields[1], Price: plan.Price}
	if err := b.store.PutQuote(q); err != nil {
		out.sayT(chat, "OrdersUnavailable")
		return
	}
	var msg store.OutboxMessage
	if chat == user {
		bal, _ := b.store.GetBalance(user)
		msg = htmlMessage(chat, out.p.T("OrderConfirm", "Plan", html.EscapeString(plan.Name), "Region", html.EscapeString(fields[1]),
			"Price", out.p.Money(plan.Price), "Balance", out.p.Money(bal.Available)))
	} else {
		// In a group, without the balance: everyone there reads the quote.
		msg = htmlMessage(chat, out.p.T("OrderConfirmGroup", "Plan", html.EscapeString(plan.Name), "Region", html.EscapeString(fields[1]),
			"Price", out.p.Money(plan.Price)))
	}
	msg.ReplyMarkup, _ = telegram.Markup([]telegram.Button{
		{Text: out.p.T("ButtonConfirm"), CallbackData: "oc:" + nonce},
		{Text: out.p.T("ButtonCancel"), CallbackData: "ox:" + nonce},
	})
	out.replies = append(out.replies, msg)
}

func (b *bot) callback(cq *tgCallbackQuery, out *botOutcome) {
	user := cq.from().ID
	chat := user
	if c, ok := cq.Message.accessible(); ok {
		chat = c.ID
	}
	answer := func(text string) {
		out.replies = append(out.replies, store.OutboxMessage{ChatID: chat, CallbackQueryID: cq.ID, Text: text})
	}
	action, nonce, ok := strings.Cut(cq.Data, ":")
	if !ok || (action != "oc" && action != "ox") || len(nonce) != 16 {
		answer(out.p.T("ButtonInvalid"))
		return
	}
	q, err := b.store.GetQuote(nonce)
	switch {
	case errors.Is(err, store.ErrNotFound):
		answer(out.p.T("ButtonExpired"))
		return
	case err != nil:
		answer(out.p.T("ButtonRetry"))
		return
	case q.UserID != user:
		// Someone else's button (a forwarded message, a group chat, a forged callback).
		answer(out.p.T("ButtonNotYours"))
		return
	}
	if _, err := b.store.TakeQuote(nonce); err != nil {
		answer(out.p.T("ButtonUsed"))
		return
	}
	if action == "ox" {
		answer(out.p.T("ButtonCancelled"))
		out.sayT(q.ChatID, "OrderCancelledNothingCharged")
		return
	}
	plan, err := b.catalog.Lookup(q.SpecID, q.Region)
	if err != nil {
		answer(out.p.T("PlanGone"))
		return
	}
	if plan.Price != q.Price {
		// The catalogue changed since the quote (a restart with new prices): the user
		// agreed to the quoted price, not this one. Confirmed, the order was charged
		// whatever the catalogue said now.
		answer(out.p.T("PriceChangedShort"))
		out.sayT(q.ChatID, "PriceChanged", "Plan", html.EscapeString(plan.Name), "Quoted", out.p.Money(q.Price), "Price", out.p.Money(plan.Price))
		return
	}
	o, err := b.store.CreateOrder(newOrder(plan, OrderRequest{
		UserID: user, TelegramUserID: user, ChatID: q.ChatID, SpecID: plan.SpecID, Region: q.Region,
	}), b.limit)
	switch {
	case errors.Is(err, store.ErrInsufficientFunds):
		bal, _ := b.store.GetBalance(user)
		answer(out.p.T("InsufficientFundsShort"))
		out.sayT(q.ChatID, "InsufficientFunds", "Balance", out.p.Money(bal.Available), "Price", out.p.Money(plan.Price))
		return
	case errors.Is(err, store.ErrOrderRateLimited):
		answer(out.p.T("TooManyOrdersShort"))
		out.sayT(q.ChatID, "TooManyOrders", "Max", b.limit.Max, "Window", b.limit.Window)
		return
	case err != nil:
		// Nothing was ordered: the quote goes back, so that "try again" can be done
		// with the same button.
		// If the store cannot take it back either, the button says it expired, and
		// /order makes a new one.
		_ = b.store.ReturnQuote(q)
		answer(out.p.T("ButtonRetry"))
		out.sayT(q.ChatID, "OrderNotTaken")
		return
	}
	answer(out.p.T("OrderReceivedShort"))
	if b.pause != nil && b.pause.get().Paused {
		out.sayT(q.ChatID, "OrderReceivedPaused", "ID", o.ID, "Since", b.pause.get().Since.UTC().Format("2006-01-02 15:04 UTC"))
	} else {
		out.sayT(q.ChatID, "OrderReceived", "ID", o.ID)
	}
	out.effects = append(out.effects, enqueueOrder{order: o}, publishEvent{ev: orderFeedEvent(o, "enqueued", b.clock.Now())})
}

// privately is where an answer about the user's money or servers goes: the user's
// private chat with the bot (a user's private chat id is their user id), with a note
// in the group it was asked in, where everyone would have read it.
func privately(chat, user int64, out *botOutcome) int64 {
	if chat == user || user == 0 {
		return chat
	}
	out.sayT(chat, "AnsweredPrivately")
	return user
}

// ownOrder parses an order id argument and loads it if it belongs to user.
func (b *bot) ownOrder(chat, user int64, args, usage string, out *botOutcome) (store.Order, bool) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(args), "#"), 10, 64)
	if err != nil || id <= 0 {
		out.sayT(chat, "OrderIDUsage", "Command", usage)
		return store.Order{}, false
	}
	o, err := b.store.GetOrder(id)
	if err != nil || o.TelegramUserID != user {
		out.sayT(chat, "NoSuchOrder", "ID", id)
		return store.Order{}, false
	}
	return o, true
}

// statusIDs are the catalogue's words for each order status.
var statusIDs = map[string]string{
	store.OrderPending:      "StatusPending",
	store.OrderProvisioning: "StatusProvisioning",
	store.OrderActive:       "StatusActive",
	store.OrderSuspended:    "StatusSuspended",
	store.OrderFailed:       "StatusFailed",
	store.OrderCancelled:    "StatusCancelled",
	store.OrderTerminated:   "StatusTerminated",
}

// statusWord is an order status in the user's language.
func statusWord(p i18n.Printer, status string) string {
	if id, ok := statusIDs[status]; ok {
		return p.T(id)
	}
	return html.EscapeString(status)
}

func (b *bot) status(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/status", out)
	if !ok {
		return
	}
	word := statusWord(out.p, o.Status)
	if o.WaitingRetry() {
		word = out.p.T("StatusRetrying", "Attempt", o.Attempts, "At", o.DueAt.UTC().Format("15:04:05 UTC"))
	}
	text := out.p.T("Status", "ID", o.ID, "Status", word, "Spec", html.EscapeString(o.SpecID),
		"Region", html.EscapeString(o.Region), "Price", out.p.Money(o.PricePaid))
	if o.IPAddress != "" {
		text += "\n" + out.p.T("StatusIP", "IP", html.EscapeString(o.IPAddress))
	}
	if o.Status == store.OrderFailed && o.LastError != "" {
		text += "\n" + out.p.T("StatusReason", "Reason", html.EscapeString(o.LastError))
	}
	text += b.notes().billingStatus(o)
	out.say(chat, "%s", text)
}

func (b *bot) servers(chat, user int64, out *botOutcome) {
	orders, err := b.store.UserOrders(user, 20)
	if err != nil {
		out.sayT(chat, "OrdersUnreadable")
		return
	}
	if len(orders) == 0 {
		out.sayT(chat, "NoOrders")
		return
	}
	var sb strings.Builder
	sb.WriteString(out.p.T("OrdersTitle"))
	sb.WriteString("\n")
	for _, o := range orders {
		sb.WriteString("\n")
		sb.WriteString(out.p.T("OrdersLine", "ID", o.ID, "Spec", html.EscapeString(o.SpecID), "Region", html.EscapeString(o.Region), "Status", statusWord(out.p, o.Status)))
		if o.Status == store.OrderActive {
			fmt.Fprintf(&sb, " <code>%s</code>", html.EscapeString(o.IPAddress))
		}
	}
	out.say(chat, "%s", sb.String())
}

func (b *bot) cancel(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/cancel", out)
	if !ok {
		return
	}
	now := b.clock.Now()
	done, err := b.store.UpdateOrder(o.ID, cancelPending(now))
	switch {
	case errors.Is(err, ErrOrderState):
		out.sayT(chat, "CancelTooLate", "ID", o.ID, "Status", statusWord(out.p, o.Status))
	case err != nil:
		out.sayT(chat, "CancelFailed", "ID", o.ID)
	default:
		out.sayT(chat, "CancelDone", "ID", o.ID, "Amount", out.p.Money(o.PricePaid))
		out.effects = append(out.effects, forgetOrder{id: o.ID}, publishEvent{ev: orderFeedEvent(done, "cancelled", now)})
	}
}

func (b *bot) terminate(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/terminate", out)
	if !ok {
		return
	}
	if o.Status != store.OrderActive && o.Status != store.OrderSuspended {
		out.sayT(chat, "TerminateNotRunning", "ID", o.ID, "Status", statusWord(out.p, o.Status))
		return
	}
	out.sayT(chat, "TerminateStarted", "ID", o.ID)
	out.effects = append(out.effects, terminateOrder{id: o.ID, userID: user})
}

// password sends an active server's root password again, for a short while after the
// server is ready: long enough to recover a message Telegram refused, short enough that
// a stolen chat session later finds nothing.
func (b *bot) password(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/password", out)
	if !ok {
		return
	}
	if o.Status != store.OrderActive {
		out.sayT(chat, "PasswordNotRunning", "ID", o.ID, "Status", statusWord(out.p, o.Status))
		return
	}
	window := b.passwords.window
	if window <= 0 {
		window = defaultPasswordWindow
	}
	ready, ok := readyAt(o)
	switch {
	case b.passwords.providerChooses != nil && b.passwords.providerChooses(o.Provider):
		out.sayT(chat, "PasswordProviderChose", "ID", o.ID)
	case !ok || b.clock.Now().Sub(ready) > window:
		out.sayT(chat, "PasswordWindowPassed", "ID", o.ID, "Minutes", int(window.Minutes()))
	default:
		// To the owner's private chat (a user's private chat id is their user id), never
		// to a group the command came from: everyone there would read it.
		msg := htmlMessage(user, out.p.T("PasswordAgain", "ID", o.ID, "IP", html.EscapeString(o.IPAddress), "Password", store.RootPasswordPlaceholder))
		msg.SecretOrderID = o.ID
		out.replies = append(out.replies, msg)
		if chat != user {
			out.sayT(chat, "PasswordSentPrivately", "ID", o.ID)
		}
	}
}

// readyAt is when the order's server was recorded ready.
func readyAt(o store.Order) (time.Time, bool) {
	for i := len(o.History) - 1; i >= 0; i-- {
		if o.History[i].Event == "succeeded" {
			return o.History[i].At, true
		}
	}
	return time.Time{}, false
}

type passwordPolicy struct {
	window          time.Duration
	providerChooses func(provider string) bool
}

// slowDownReply is the one message a user gets when their window fills up. A button
// press gets it as its answer (a toast only the presser sees); a message in a group
// gets nothing: the messages counted there may not have been for this bot at all
// (chatter, another bot's commands), and the notice would be everyone's.
func (b *bot) slowDownReply(u *tgUpdate, wait time.Duration, lang *store.UserLanguage) []store.OutboxMessage {
	if u.CallbackQuery != nil {
		return b.refusedPress(u, wait, lang)
	}
	chat := chatID(u)
	if chat <= 0 || u.Message == nil {
		return nil
	}
	p, _ := b.printerFor(u.Message.From, lang) // a new client language is remembered with an update that passes
	return []store.OutboxMessage{htmlMessage(chat, p.T("SlowDown", "Seconds", waitSeconds(wait)))}
}

// refusedPress answers a rate-limited button press with the slow-down notice as its
// toast; any other refused update gets nothing.
func (b *bot) refusedPress(u *tgUpdate, wait time.Duration, lang *store.UserLanguage) []store.OutboxMessage {
	cq := u.CallbackQuery
	if cq == nil || cq.ID == "" {
		return nil
	}
	p, _ := b.printerFor(cq.from(), lang)
	return []store.OutboxMessage{{ChatID: chatID(u), CallbackQueryID: cq.ID, Text: p.T("SlowDown", "Seconds", waitSeconds(wait))}}
}

func waitSeconds(wait time.Duration) int {
	return max(int(wait.Round(time.Second)/time.Second), 1)
}

func htmlMessage(chatID int64, text string) store.OutboxMessage {
	return store.OutboxMessage{ChatID: chatID, Text: text, ParseMode: string(models.ParseModeHTML)}
}

// splitCommand returns the command word ("/start", without any @botname) and the rest.
func splitCommand(text string) (cmd, addressee, args string) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", "", text
	}
	// Any white space ends the command: arguments pasted on the next line (an SSH
	// key) or after a tab are arguments.
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		_, size := utf8.DecodeRuneInString(text[i:]) // U+00A0, U+3000: more than a byte
		cmd, args = text[:i], text[i+size:]
	} else {
		cmd = text
	}
	cmd, addressee, _ = strings.Cut(cmd, "@")
	return strings.ToLower(cmd), addressee, strings.TrimSpace(args)
}

func chatID(u *tgUpdate) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	case u.CallbackQuery != nil:
		if c, ok := u.CallbackQuery.Message.accessible(); ok {
			return c.ID
		}
		return u.CallbackQuery.from().ID
	}
	return 0
}

func newNonce() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (b *bot) notes() notes { return notes{catalog: b.catalog, lang: b.lang, users: b.pay} }

// renew pays the next period now (a suspended server comes back on).
func (b *bot) renew(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/renew", out)
	if !ok {
		return
	}
	done, err := b.renewOnce(o, out.updateID)
	switch {
	case errors.Is(err, store.ErrAlreadyApplied):
		// A re-delivery of a /renew that was paid (its reply may not have gone out).
		if current, gerr := b.store.GetOrder(o.ID); gerr == nil {
			out.say(chat, "%s", b.notes().billingRenewedNow(current))
		}
	case errors.Is(err, store.ErrInsufficientFunds):
		bal, _ := b.store.GetBalance(o.UserID)
		out.say(chat, "%s", b.notes().billingRenewRefused(o, bal.Available))
	case errors.Is(err, ErrOrderState):
		out.say(chat, "%s", b.notes().billingNotRenewable(o, statusWord(out.p, o.Status)))
	case err != nil:
		out.sayT(chat, "RenewFailed", "ID", o.ID)
	default:
		out.say(chat, "%s", b.notes().billingRenewedNow(done))
		if done.Op != "" {
			out.effects = append(out.effects, opEnqueue(o, done))
		}
		out.effects = append(out.effects, publishEvent{ev: orderFeedEvent(done, "renewed", b.clock.Now())})
	}
}

// renewOnce renews o in a commit keyed on the update that asked: the renewal commits
// before the update is marked seen, so a re-delivery of the same /renew must not pay a
// second period.
func (b *bot) renewOnce(o store.Order, updateID int64) (store.Order, error) {
	res, err := b.store.UpdateOrders([]store.OrderChange{{ID: o.ID, Apply: renewal(b.clock.Now(), b.billing.Period, o.Period), Once: updateID}})
	if err != nil {
		return store.Order{}, err
	}
	return res[0].Order, res[0].Err
}

// autoRenew switches an order's renewal off or on: "/autorenew 12 off".
func (b *bot) autoRenew(chat, user int64, args string, out *botOutcome) {
	id, word, _ := strings.Cut(strings.TrimSpace(args), " ")
	word = strings.ToLower(strings.TrimSpace(word))
	if word != "off" && word != "on" {
		out.sayT(chat, "AutoRenewUsage")
		return
	}
	o, ok := b.ownOrder(chat, user, id, "/autorenew", out)
	if !ok {
		return
	}
	done, err := b.store.UpdateOrder(o.ID, autoRenew(b.clock.Now(), word == "off"))
	switch {
	case errors.Is(err, ErrOrderState):
		out.say(chat, "%s", b.notes().billingNotRenewable(o, statusWord(out.p, o.Status)))
	case err != nil:
		out.sayT(chat, "AutoRenewFailed", "ID", o.ID)
	default:
		out.say(chat, "%s", b.notes().billingAutoRenew(done))
	}
}
