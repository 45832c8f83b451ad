package engine

import (
	"context"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine/i18n"
	"github.com/hangarhq/hangar/engine/telegram"
	"github.com/hangarhq/hangar/store"
)

// PaymentStore is what Telegram Stars top-ups and the users' languages keep on disk.
type PaymentStore interface {
	PutInvoice(inv store.Invoice) error
	GetInvoice(nonce string) (store.Invoice, error)
	CreditPayment(p store.Payment) (store.Payment, bool, error)
	GetPayment(chargeID string) (store.Payment, error)
	Payments(limit int) ([]store.Payment, error)
	BeginRefund(chargeID string) (store.Payment, error)
	FinishRefund(chargeID string, notes ...store.OutboxMessage) (store.Payment, error)
	ReverseRefund(chargeID, reason string) (store.Payment, error)
	RecordTelegramRefund(chargeID string) (p store.Payment, taken, uncovered int64, err error)
	GetUserLanguage(user int64) (store.UserLanguage, error)
	GetBalance(user int64) (store.Balance, error)
}

// paymentSender is the part of the Bot API Stars need beside text messages. The
// outbox sends invoices through it; pre-checkout answers and refunds call it directly.
type paymentSender interface {
	SendInvoice(ctx context.Context, m store.OutboxMessage) error
	AnswerPreCheckoutQuery(ctx context.Context, id string, ok bool, errMessage string) error
	RefundStarPayment(ctx context.Context, user int64, chargeID string) error
}

var (
	_ paymentSender = (*telegram.Client)(nil)
	_ paymentSender = telegram.Off{}
)

var (
	// ErrPaymentsOff is a refund asked of a hangar that cannot reach Telegram.
	ErrPaymentsOff = errors.New("engine: Telegram sending is off (no bot token), so nothing can be refunded")
	// ErrRefundRefused is a refund Telegram refused; the ledger was put back.
	ErrRefundRefused = errors.New("engine: Telegram refused the refund")
	// ErrRefundPending is a refund whose money left the balance while Telegram did not
	// answer: asking again finishes it (Telegram says if it was done already).
	ErrRefundPending = errors.New("engine: Telegram did not confirm the refund; the balance was debited, ask again to finish it")
)

const (
	// preCheckoutBudget is what answering a pre_checkout_query may take of Telegram's
	// 10 s: the update's trip here and the answer's trip back need the rest.
	preCheckoutBudget = 5 * time.Second
	maxInvoiceStars   = 10000 // Telegram's largest Stars invoice
	payloadPrefix     = "topup"
)

// invoicePayload names the user, the amount and the invoice's nonce; Telegram hands
// it back in the pre-checkout query and the payment, and both are checked against
// the stored invoice, so a payload made up by anyone else pays nothing.
func invoicePayload(user, amount int64, nonce string) string {
	return fmt.Sprintf("%s:%d:%d:%s", payloadPrefix, user, amount, nonce)
}

type payload struct {
	user, amount int64
	nonce        string
}

func parsePayload(s string) (payload, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 || parts[0] != payloadPrefix || len(parts[3]) != 16 {
		return payload{}, false
	}
	user, err1 := strconv.ParseInt(parts[1], 10, 64)
	amount, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || user <= 0 || amount <= 0 {
		return payload{}, false
	}
	return payload{user: user, amount: amount, nonce: parts[3]}, true
}

// printerFor picks the language of a user's reply from their record (lang, as their
// actor holds it; nil when it could not be read) and their client's language_code.
// A client language not yet in the record is returned as the record to keep, for
// the notifications sent to them outside a conversation; it is committed with the
// update (a hint only: an update whose commit fails costs nothing more).
func (b *bot) printerFor(from *tgUser, lang *store.UserLanguage) (i18n.Printer, *store.UserLanguage) {
	if from == nil {
		return b.lang.For(b.lang.Default()), nil
	}
	var l store.UserLanguage
	var changed *store.UserLanguage
	if lang != nil {
		l = *lang
		if from.LanguageCode != "" && l.Client != from.LanguageCode {
			l.Client = from.LanguageCode
			changed = &l
		}
	}
	return b.lang.For(b.lang.Pick(l.Chosen, from.LanguageCode)), changed
}

// language switches a user's language (/language ko|en) and keeps the choice, with
// the update's commit.
func (b *bot) language(chat int64, args string, out *botOutcome) {
	want := strings.ToLower(strings.TrimSpace(args))
	if !i18n.IsSupported(want) {
		out.sayT(chat, "LanguageUsage", "Current", out.p.Lang())
		return
	}
	var l store.UserLanguage
	switch {
	case out.language != nil:
		l = *out.language
	case out.lang != nil:
		l = *out.lang
	default: // the record could not be read: writing would lose what it holds
		out.sayT(chat, "LanguageUnsaved")
		return
	}
	l.Chosen = want
	out.language = &l
	out.p = b.lang.For(want)
	out.sayT(chat, "LanguageSet")
}

// topup sends an invoice in Telegram Stars for an amount of the catalogue currency.
func (b *bot) topup(chat, user int64, args string, out *botOutcome) {
	if b.starsRate <= 0 {
		out.sayT(chat, "TopupOff")
		return
	}
	cur := b.catalog.Currency
	example := strconv.FormatInt(5000, 10)
	if d := i18n.MinorDigits(cur); d > 0 {
		example = "10"
	}
	minAmount := b.starsRate // one star
	maxAmount := b.starsRate * maxInvoiceStars
	if strings.TrimSpace(args) == "" {
		out.sayT(chat, "TopupUsage", "Example", example, "Rate", out.p.Money(b.starsRate))
		return
	}
	amount, err := i18n.ParseMoney(cur, args)
	switch {
	case err != nil || amount <= 0:
		out.sayT(chat, "TopupBadAmount", "Amount", html.EscapeString(strings.TrimSpace(args)), "Example", example)
		return
	case amount < minAmount:
		out.sayT(chat, "TopupTooSmall", "Min", out.p.Money(minAmount))
		return
	case amount > maxAmount:
		out.sayT(chat, "TopupTooLarge", "Max", out.p.Money(maxAmount))
		return
	}
	// Whole stars, rounded up: the operator never credits more than Telegram paid.
	stars := (amount + b.starsRate - 1) / b.starsRate
	nonce, err := newNonce()
	if err != nil {
		out.sayT(chat, "TopupFailed")
		return
	}
	if err := b.pay.PutInvoice(store.Invoice{Nonce: nonce, UserID: user, ChatID: chat, Amount: amount, Stars: stars}); err != nil {
		out.sayT(chat, "TopupFailed")
		return
	}
	money := out.p.Money(amount)
	desc := out.p.T("InvoiceDescription", "Amount", money)
	out.replies = append(out.replies, store.OutboxMessage{ChatID: chat, Text: desc, Invoice: &store.InvoiceRequest{
		Title: out.p.T("InvoiceTitle"), Description: desc, Payload: invoicePayload(user, amount, nonce),
		Label: out.p.T("InvoiceLabel", "Amount", money), Stars: stars,
	}})
}

// paid credits a successful_payment once per charge id. The credit is its own commit,
// made before the update's: a crash between the two re-delivers the update, which
// finds the charge credited and only says so again.
// refundedByTelegram takes back the credit of a payment Telegram refunded on its own
// (refunded_payment) and tells the user; a charge id hangar does not know is ignored.
func (b *bot) refundedByTelegram(m *tgMessage, out *botOutcome) {
	rp := m.RefundedPayment
	if b.pay == nil || rp.TelegramPaymentChargeID == "" {
		return
	}
	p, taken, _, err := b.pay.RecordTelegramRefund(rp.TelegramPaymentChargeID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			out.keep = true // the store failed: the update stays for the sweep to retry
		}
		return
	}
	if taken > 0 {
		out.sayT(p.ChatID, "PaymentRefunded", "Stars", p.Stars, "Amount", out.p.Money(taken))
	}
}

func (b *bot) paid(m *tgMessage, updateID int64, out *botOutcome) {
	sp := m.SuccessfulPayment
	chat, user := m.Chat.ID, m.From.ID
	p := store.Payment{ChargeID: sp.TelegramPaymentChargeID, UserID: user, ChatID: chat, Stars: int64(sp.TotalAmount), UpdateID: updateID}
	if pl, ok := parsePayload(sp.InvoicePayload); ok {
		p.Nonce, p.Amount = pl.nonce, pl.amount
		if inv, err := b.pay.GetInvoice(pl.nonce); err == nil && inv.UserID == user {
			p.Amount = inv.Amount
		}
	}
	if p.Amount <= 0 {
		// Not our payload (Telegram took the Stars all the same): credit them at the rate.
		p.Amount = p.Stars * b.starsRate
	}
	if p.ChargeID == "" || p.Amount <= 0 {
		out.sayT(chat, "PaymentNotCredited", "Stars", sp.TotalAmount, "Charge", html.EscapeString(p.ChargeID))
		return
	}
	credited, fresh, err := b.pay.CreditPayment(p)
	switch {
	case err != nil:
		b.payMetrics.payments.WithLabelValues("failed").Inc()
	case fresh:
		b.payMetrics.payments.WithLabelValues("credited").Inc()
	default:
		b.payMetrics.payments.WithLabelValues("duplicate").Inc()
	}
	if err != nil {
		// The update stays in the inbox and is tried again; the user hears now.
		out.keep = true
		out.sayT(chat, "PaymentNotCredited", "Stars", sp.TotalAmount, "Charge", html.EscapeString(p.ChargeID))
		return
	}
	if credited.UserID != user {
		// A charge id already credited to someone else: Telegram never sends one twice
		// to two users, so this is forged or broken. Nothing of the other account is
		// told; hangar_stars_payments_total{result="conflict"} counts it.
		b.payMetrics.payments.WithLabelValues("conflict").Inc()
		out.sayT(chat, "PaymentNotCredited", "Stars", sp.TotalAmount, "Charge", html.EscapeString(p.ChargeID))
		return
	}
	bal, _ := b.pay.GetBalance(credited.UserID)
	out.sayT(chat, "PaymentCredited", "Amount", out.p.Money(credited.Amount), "Stars", credited.Stars, "Balance", out.p.Money(bal.Available))
}

// answerPreCheckout answers a pre_checkout_query on the webhook's (or poller's) own
// goroutine: Telegram cancels the payment unless it hears within 10 s, so the answer
// must not wait behind the user's actor, the outbox's pacing or its backlog. It
// checks the payload against the stored invoice: same user, same amount, same
// number of Stars, not paid, not expired.
//
// q is the update's query as the webhook or the poller decoded it (ParseUpdateHeader).
func (e *Engine) answerPreCheckout(q *tgPreCheckoutQuery) {
	// On the request's goroutine, outside any actor: a panic here would end the
	// process, so it is recovered and counted like an actor's; Telegram then cancels
	// the payment on its own.
	defer recoverPanic(e.cfg.Logger, e.metrics, "precheckout", nil)
	if q == nil || q.From == nil {
		return
	}
	start := time.Now()
	defer func() { e.bot.payMetrics.preCheckoutSeconds.Observe(time.Since(start).Seconds()) }()
	msgID := e.checkPreCheckout(q)
	// Read-only: a write here would put a disk sync into Telegram's 10 s.
	lang, _ := e.bot.pay.GetUserLanguage(q.From.ID)
	p := e.bot.lang.For(e.bot.lang.Pick(lang.Chosen, q.From.LanguageCode))
	ps := e.payments
	if ps == nil {
		e.bot.payMetrics.preCheckout.WithLabelValues("unanswered").Inc()
		e.cfg.Logger.Warn("pre_checkout_query not answered: Telegram sending is off", "user", q.From.ID)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), preCheckoutBudget)
	defer cancel()
	var text string
	if msgID != "" {
		text = p.T(msgID)
	}
	if err := ps.AnswerPreCheckoutQuery(ctx, q.ID, msgID == "", text); err != nil {
		e.bot.payMetrics.preCheckout.WithLabelValues("unanswered").Inc()
		e.cfg.Logger.Error("pre_checkout_query answer failed; Telegram will cancel the payment", "user", q.From.ID, "err", err)
		return
	}
	if msgID == "" {
		e.bot.payMetrics.preCheckout.WithLabelValues("ok").Inc()
	} else {
		e.bot.payMetrics.preCheckout.WithLabelValues("refused").Inc()
	}
	e.cfg.Logger.Info("pre_checkout_query answered", "user", q.From.ID, "ok", msgID == "", "stars", q.TotalAmount)
}

// checkPreCheckout returns "" for a payment to accept, else the message id of why not.
func (e *Engine) checkPreCheckout(q *tgPreCheckoutQuery) string {
	pl, ok := parsePayload(q.InvoicePayload)
	if !ok || q.Currency != telegram.Stars || pl.user != q.From.ID {
		return "PreCheckoutInvalid"
	}
	inv, err := e.bot.pay.GetInvoice(pl.nonce)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "PreCheckoutExpired"
	case err != nil:
		return "PreCheckoutUnavailable"
	case inv.UserID != pl.user || inv.Amount != pl.amount || inv.Stars != int64(q.TotalAmount):
		return "PreCheckoutInvalid"
	}
	return ""
}

// Payments lists Telegram Stars payments, newest first.
func (e *Engine) Payments(limit int) ([]store.Payment, error) { return e.bot.pay.Payments(limit) }

// RefundPayment gives a payment's Stars back and takes its amount off the balance,
// once. The ledger moves first (refused if the balance no longer covers it), then
// Telegram is asked; a refusal puts the money back, no answer leaves the refund
// pending for the admin to ask again.
func (e *Engine) RefundPayment(ctx context.Context, chargeID string) (store.Payment, error) {
	ps := e.payments
	if ps == nil {
		return store.Payment{}, ErrPaymentsOff
	}
	p, err := e.bot.pay.BeginRefund(chargeID)
	if errors.Is(err, store.ErrRefundUncovered) {
		e.bot.payMetrics.refunds.WithLabelValues("uncovered").Inc()
	}
	if err != nil {
		return p, err
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	err = ps.RefundStarPayment(ctx, p.UserID, p.ChargeID)
	var tgErr *telegram.Error
	switch {
	case err == nil, errors.As(err, &tgErr) && strings.Contains(tgErr.Description(), "CHARGE_ALREADY_REFUNDED"):
		lang, _ := e.bot.pay.GetUserLanguage(p.UserID)
		pr := e.bot.lang.For(e.bot.lang.Pick(lang.Chosen, lang.Client))
		note := htmlMessage(p.ChatID, pr.T("PaymentRefunded", "Stars", p.Stars, "Amount", pr.Money(p.Amount)))
		done, err := e.bot.pay.FinishRefund(chargeID, note)
		if err != nil {
			return p, fmt.Errorf("%w (%v)", ErrRefundPending, err)
		}
		e.actors.Send(e.outbox, pokeOutbox{})
		e.bot.payMetrics.refunds.WithLabelValues("refunded").Inc()
		return done, nil
	case errors.As(err, &tgErr) && tgErr.Permanent():
		e.bot.payMetrics.refunds.WithLabelValues("refused").Inc()
		back, rerr := e.bot.pay.ReverseRefund(chargeID, tgErr.Error())
		if rerr != nil {
			return p, fmt.Errorf("%w: %v; putting the money back failed too, ask again: %v", ErrRefundRefused, tgErr, rerr)
		}
		return back, fmt.Errorf("%w: %v", ErrRefundRefused, tgErr)
	}
	e.bot.payMetrics.refunds.WithLabelValues("pending").Inc()
	return p, fmt.Errorf("%w: %v", ErrRefundPending, err)
}

// paymentMetrics count what Stars payments do, for the operator's dashboards.
type paymentMetrics struct {
	preCheckout        *prometheus.CounterVec // result: ok, refused, unanswered
	preCheckoutSeconds prometheus.Histogram
	payments           *prometheus.CounterVec // result: credited, duplicate, failed
	refunds            *prometheus.CounterVec // result: refunded, refused, pending, uncovered
}

func newPaymentMetrics(reg prometheus.Registerer) *paymentMetrics {
	m := &paymentMetrics{
		preCheckout: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_stars_precheckout_total", Help: "pre_checkout_query answers by result (unanswered: Telegram could not be told).",
		}, []string{"result"}),
		preCheckoutSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "hangar_stars_precheckout_seconds", Help: "Time to check and answer a pre_checkout_query; Telegram gives up at 10 s.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_stars_payments_total", Help: "successful_payment deliveries by result (duplicate: the charge was credited before; conflict: credited before to another user).",
		}, []string{"result"}),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_stars_refunds_total", Help: "Refunds asked by the admin, by result.",
		}, []string{"result"}),
	}
	if reg != nil {
		reg.MustRegister(m.preCheckout, m.preCheckoutSeconds, m.payments, m.refunds)
	}
	return m
}
