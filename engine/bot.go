package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/telegram"
	"github.com/hangarhq/hangar/store"
)

// BotStore is what the chat commands read and write.
type BotStore interface {
	PutQuote(q store.Quote) error
	GetQuote(nonce string) (store.Quote, error)
	TakeQuote(nonce string) (store.Quote, error)
	GetBalance(user int64) (store.Balance, error)
	CreateOrder(o store.Order, limit store.OrderLimit, notes ...store.OutboxMessage) (store.Order, error)
	GetOrder(id int64) (store.Order, error)
	UserOrders(user int64, limit int) ([]store.Order, error)
	UpdateOrder(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, error)
}

const helpText = `<b>hangar</b> creates cloud servers from this chat.

/plans — what you can order
/order &lt;plan&gt; &lt;region&gt; — order a server (you confirm with a button)
/status &lt;order&gt; — where an order is
/servers — your servers and recent orders
/balance — your balance
/cancel &lt;order&gt; — cancel an order that has not started
/terminate &lt;order&gt; — delete a server
/renew &lt;order&gt; — pay your server's next period now
/autorenew &lt;order&gt; off|on — let a server end with its paid period, or keep renewing it
/password &lt;order&gt; — your server's root password again, shortly after it is ready
/sshkey &lt;public key&gt; — create your next servers with your SSH key
/help — this list`

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
}

// botOutcome is what handling one update produced: replies to queue with the update's
// completion, and messages for the dispatcher once it is durable.
type botOutcome struct {
	replies []store.OutboxMessage
	effects []any
}

func (o *botOutcome) say(chat int64, format string, args ...any) {
	o.replies = append(o.replies, htmlMessage(chat, fmt.Sprintf(format, args...)))
}

// handle answers an update that passed the rate limit.
func (b *bot) handle(u *models.Update) botOutcome {
	var out botOutcome
	switch {
	case u.CallbackQuery != nil:
		b.callback(u.CallbackQuery, &out)
	case u.Message != nil && u.Message.From != nil:
		b.command(u.Message, &out)
	}
	return out
}

func (b *bot) command(m *models.Message, out *botOutcome) {
	cmd, args := splitCommand(m.Text)
	chat, user := m.Chat.ID, m.From.ID
	switch cmd {
	case "/start":
		out.say(chat, "Hello, %s! 👋\n\n%s", html.EscapeString(m.From.FirstName), helpText)
	case "/help":
		out.say(chat, "%s", helpText)
	case "/plans":
		out.say(chat, "%s", b.plansText())
	case "/order":
		b.order(chat, user, args, out)
	case "/status":
		b.status(chat, user, args, out)
	case "/servers":
		b.servers(chat, user, out)
	case "/balance":
		bal, err := b.store.GetBalance(user)
		if err != nil {
			out.say(chat, "Your balance cannot be read right now; please try again.")
			return
		}
		out.say(chat, "Balance: <b>%s</b> available, %s held for orders in progress.", b.money(bal.Available), b.money(bal.Held))
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
		out.say(chat, "I only understand commands. Send /help to see them.")
	default:
		out.say(chat, "Unknown command <code>%s</code>. Send /help to see what I can do.", html.EscapeString(cmd))
	}
}

func (b *bot) money(n int64) string { return formatMoney(b.catalog.Currency, n) }

func (b *bot) plansText() string {
	var sb strings.Builder
	sb.WriteString("<b>Plans</b> (monthly price)\n")
	for _, p := range b.catalog.Plans {
		fmt.Fprintf(&sb, "\n<code>%s</code> — %s, %s\n  regions: %s", html.EscapeString(p.SpecID), html.EscapeString(p.Name),
			b.money(p.Price), html.EscapeString(strings.Join(p.Regions, ", ")))
	}
	sb.WriteString("\n\nOrder with /order &lt;plan&gt; &lt;region&gt;, e.g. <code>/order ")
	if len(b.catalog.Plans) > 0 {
		p := b.catalog.Plans[0]
		sb.WriteString(html.EscapeString(p.SpecID + " " + p.Regions[0]))
	}
	sb.WriteString("</code>")
	return sb.String()
}

// order quotes a plan and asks for confirmation with an inline keyboard.
func (b *bot) order(chat, user int64, args string, out *botOutcome) {
	fields := strings.Fields(args)
	if len(fields) != 2 {
		out.say(chat, "Usage: /order &lt;plan&gt; &lt;region&gt;. See /plans.")
		return
	}
	plan, err := b.catalog.Lookup(fields[0], fields[1])
	if err != nil {
		out.say(chat, "%s. See /plans.", html.EscapeString(upperFirst(err.Error())))
		return
	}
	nonce, err := newNonce()
	if err != nil {
		out.say(chat, "Something went wrong; please try again.")
		return
	}
	q := store.Quote{Nonce: nonce, UserID: user, ChatID: chat, SpecID: plan.SpecID, Region: fields[1], Price: plan.Price}
	if err := b.store.PutQuote(q); err != nil {
		out.say(chat, "Orders cannot be taken right now; please try again.")
		return
	}
	bal, _ := b.store.GetBalance(user)
	msg := htmlMessage(chat, fmt.Sprintf("Order <b>%s</b> in <b>%s</b> for <b>%s</b> a month?\nYour balance: %s. The price is held now and charged when the server is ready.",
		html.EscapeString(plan.Name), html.EscapeString(fields[1]), b.money(plan.Price), b.money(bal.Available)))
	msg.ReplyMarkup, _ = telegram.Markup([]telegram.Button{
		{Text: "✅ Confirm", CallbackData: "oc:" + nonce},
		{Text: "✖ Cancel", CallbackData: "ox:" + nonce},
	})
	out.replies = append(out.replies, msg)
}

func (b *bot) callback(cq *models.CallbackQuery, out *botOutcome) {
	user := cq.From.ID
	chat := user
	if cq.Message.Message != nil {
		chat = cq.Message.Message.Chat.ID
	}
	answer := func(text string) {
		out.replies = append(out.replies, store.OutboxMessage{ChatID: chat, CallbackQueryID: cq.ID, Text: text})
	}
	action, nonce, ok := strings.Cut(cq.Data, ":")
	if !ok || (action != "oc" && action != "ox") || len(nonce) != 16 {
		answer("This button is not valid.")
		return
	}
	q, err := b.store.GetQuote(nonce)
	switch {
	case errors.Is(err, store.ErrNotFound):
		answer("This order button has expired or was already used.")
		return
	case err != nil:
		answer("Please try again.")
		return
	case q.UserID != user:
		// Someone else's button (a forwarded message, a group chat, a forged callback).
		answer("This button is not for you.")
		return
	}
	if _, err := b.store.TakeQuote(nonce); err != nil {
		answer("This order button was already used.")
		return
	}
	if action == "ox" {
		answer("Cancelled.")
		out.say(q.ChatID, "Order cancelled; nothing was charged.")
		return
	}
	plan, err := b.catalog.Lookup(q.SpecID, q.Region)
	if err != nil {
		answer("That plan is no longer offered.")
		return
	}
	o, err := b.store.CreateOrder(newOrder(plan, OrderRequest{
		UserID: user, TelegramUserID: user, ChatID: q.ChatID, SpecID: plan.SpecID, Region: q.Region,
	}), b.limit)
	switch {
	case errors.Is(err, store.ErrInsufficientFunds):
		bal, _ := b.store.GetBalance(user)
		answer("Insufficient funds.")
		out.say(q.ChatID, "Your balance (%s) does not cover %s. Nothing was ordered.", b.money(bal.Available), b.money(plan.Price))
		return
	case errors.Is(err, store.ErrOrderRateLimited):
		answer("Too many orders.")
		out.say(q.ChatID, "You can place at most %d orders per %s. Please try again later.", b.limit.Max, b.limit.Window)
		return
	case err != nil:
		answer("Please try again.")
		out.say(q.ChatID, "The order could not be taken right now; nothing was charged. Please try again.")
		return
	}
	answer("Order received.")
	if b.pause != nil && b.pause.get().Paused {
		out.say(q.ChatID, "Order <b>#%d</b> received. Server creation is paused right now (since %s), so your order is kept, your funds held, and it will start as soon as creation resumes; I will message you when your server is ready. /status %d",
			o.ID, b.pause.get().Since.UTC().Format("2006-01-02 15:04 UTC"), o.ID)
	} else {
		out.say(q.ChatID, "Order <b>#%d</b> received, creating your server… I will message you when it is ready (usually under a minute). /status %d", o.ID, o.ID)
	}
	out.effects = append(out.effects, enqueueOrder{order: o}, publishEvent{ev: orderFeedEvent(o, "enqueued", b.clock.Now())})
}

// ownOrder parses an order id argument and loads it if it belongs to user.
func (b *bot) ownOrder(chat, user int64, args, usage string, out *botOutcome) (store.Order, bool) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(args), "#"), 10, 64)
	if err != nil || id <= 0 {
		out.say(chat, "Usage: %s &lt;order number&gt;", usage)
		return store.Order{}, false
	}
	o, err := b.store.GetOrder(id)
	if err != nil || o.TelegramUserID != user {
		out.say(chat, "You have no order #%d.", id)
		return store.Order{}, false
	}
	return o, true
}

var statusWords = map[string]string{
	store.OrderPending:      "waiting in the queue",
	store.OrderProvisioning: "being created… (1-2 minutes)",
	store.OrderActive:       "running ✅",
	store.OrderSuspended:    "suspended ⏸ (switched off until paid)",
	store.OrderFailed:       "failed ❌",
	store.OrderCancelled:    "cancelled",
	store.OrderTerminated:   "terminated",
}

func (b *bot) status(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/status", out)
	if !ok {
		return
	}
	word := statusWords[o.Status]
	if o.WaitingRetry() {
		word = fmt.Sprintf("retrying (attempt %d failed; next try at %s)", o.Attempts, o.DueAt.UTC().Format("15:04:05 UTC"))
	}
	text := fmt.Sprintf("Order <b>#%d</b>: %s\nPlan: %s in %s\nPrice: %s", o.ID, word,
		html.EscapeString(o.SpecID), html.EscapeString(o.Region), b.money(o.PricePaid))
	if o.IPAddress != "" {
		text += fmt.Sprintf("\nIP: <code>%s</code>", html.EscapeString(o.IPAddress))
	}
	if o.Status == store.OrderFailed && o.LastError != "" {
		text += "\nReason: " + html.EscapeString(o.LastError)
	}
	text += b.notes().billingStatus(o)
	out.say(chat, "%s", text)
}

func (b *bot) servers(chat, user int64, out *botOutcome) {
	orders, err := b.store.UserOrders(user, 20)
	if err != nil {
		out.say(chat, "Your orders cannot be read right now; please try again.")
		return
	}
	if len(orders) == 0 {
		out.say(chat, "You have no orders yet. See /plans.")
		return
	}
	var sb strings.Builder
	sb.WriteString("<b>Your orders</b>\n")
	for _, o := range orders {
		fmt.Fprintf(&sb, "\n#%d %s in %s — %s", o.ID, html.EscapeString(o.SpecID), html.EscapeString(o.Region), statusWords[o.Status])
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
		out.say(chat, "Order #%d is %s and can no longer be cancelled.", o.ID, statusWords[o.Status])
	case err != nil:
		out.say(chat, "Order #%d could not be cancelled right now; please try again.", o.ID)
	default:
		out.say(chat, "Order #%d cancelled; %s released to your balance.", o.ID, b.money(o.PricePaid))
		out.effects = append(out.effects, forgetOrder{id: o.ID}, publishEvent{ev: orderFeedEvent(done, "cancelled", now)})
	}
}

func (b *bot) terminate(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/terminate", out)
	if !ok {
		return
	}
	if o.Status != store.OrderActive {
		out.say(chat, "Order #%d is %s; only a running server can be terminated.", o.ID, statusWords[o.Status])
		return
	}
	out.say(chat, "Deleting the server of order #%d…", o.ID)
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
		out.say(chat, "Order #%d is %s; a root password is only sent for a running server.", o.ID, statusWords[o.Status])
		return
	}
	window := b.passwords.window
	if window <= 0 {
		window = defaultPasswordWindow
	}
	ready, ok := readyAt(o)
	switch {
	case b.passwords.providerChooses != nil && b.passwords.providerChooses(o.Provider):
		out.say(chat, "The root password of order #%d was chosen by the provider and sent once; hangar does not keep it. Reset it from the provider's console.", o.ID)
	case !ok || b.clock.Now().Sub(ready) > window:
		out.say(chat, "The root password of order #%d can only be sent again within %d minutes of the server being ready. Reset it from the provider's console.", o.ID, int(window.Minutes()))
	default:
		msg := htmlMessage(chat, fmt.Sprintf("🔑 Root password of order #%d (<code>%s</code>): <tg-spoiler>%s</tg-spoiler>\nChange it after your first login.",
			o.ID, html.EscapeString(o.IPAddress), store.RootPasswordPlaceholder))
		msg.SecretOrderID = o.ID
		out.replies = append(out.replies, msg)
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

// slowDownReply is the one message a user gets when their window fills up.
func slowDownReply(u *models.Update, wait time.Duration) []store.OutboxMessage {
	chat := chatID(u)
	if chat == 0 {
		return nil
	}
	secs := int(wait.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return []store.OutboxMessage{htmlMessage(chat,
		fmt.Sprintf("You are sending messages too fast. Please wait %d seconds; messages until then are ignored.", secs))}
}

func htmlMessage(chatID int64, text string) store.OutboxMessage {
	return store.OutboxMessage{ChatID: chatID, Text: text, ParseMode: string(models.ParseModeHTML)}
}

// splitCommand returns the command word ("/start", without any @botname) and the rest.
func splitCommand(text string) (cmd, args string) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", text
	}
	cmd, args, _ = strings.Cut(text, " ")
	cmd, _, _ = strings.Cut(cmd, "@")
	return strings.ToLower(cmd), strings.TrimSpace(args)
}

func chatID(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		return u.CallbackQuery.Message.Message.Chat.ID
	case u.CallbackQuery != nil:
		return u.CallbackQuery.From.ID
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

func (b *bot) notes() notes { return notes{catalog: b.catalog} }

// renew pays the next period now (a suspended server comes back on).
func (b *bot) renew(chat, user int64, args string, out *botOutcome) {
	o, ok := b.ownOrder(chat, user, args, "/renew", out)
	if !ok {
		return
	}
	done, err := b.store.UpdateOrder(o.ID, renewal(b.clock.Now(), b.billing.Period, o.Period))
	switch {
	case errors.Is(err, store.ErrInsufficientFunds):
		bal, _ := b.store.GetBalance(o.UserID)
		out.say(chat, "%s", b.notes().billingRenewRefused(o, bal.Available))
	case errors.Is(err, ErrOrderState):
		out.say(chat, "%s", b.notes().billingNotRenewable(o, statusWords[o.Status]))
	case err != nil:
		out.say(chat, "Order #%d cannot be renewed right now; please try again.", o.ID)
	default:
		out.say(chat, "%s", b.notes().billingRenewedNow(done))
		if done.Op != "" {
			out.effects = append(out.effects, enqueueOp{order: done})
		}
		out.effects = append(out.effects, publishEvent{ev: orderFeedEvent(done, "renewed", b.clock.Now())})
	}
}

// autoRenew switches an order's renewal off or on: "/autorenew 12 off".
func (b *bot) autoRenew(chat, user int64, args string, out *botOutcome) {
	id, word, _ := strings.Cut(strings.TrimSpace(args), " ")
	word = strings.ToLower(strings.TrimSpace(word))
	if word != "off" && word != "on" {
		out.say(chat, "Usage: /autorenew &lt;order number&gt; off|on")
		return
	}
	o, ok := b.ownOrder(chat, user, id, "/autorenew", out)
	if !ok {
		return
	}
	done, err := b.store.UpdateOrder(o.ID, autoRenew(b.clock.Now(), word == "off"))
	switch {
	case errors.Is(err, ErrOrderState):
		out.say(chat, "%s", b.notes().billingNotRenewable(o, statusWords[o.Status]))
	case err != nil:
		out.say(chat, "Order #%d cannot be changed right now; please try again.", o.ID)
	default:
		out.say(chat, "%s", b.notes().billingAutoRenew(done))
	}
}
