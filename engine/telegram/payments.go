package telegram

import (
	"context"
	"errors"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/hangarhq/hangar/store"
)

// Stars is the currency of Telegram Stars payments; their invoices carry no provider
// token and one price in whole stars.
const Stars = "XTR"

// SendInvoice sends m's invoice (a /topup) to m's chat.
func (c *Client) SendInvoice(ctx context.Context, m store.OutboxMessage) error {
	inv := m.Invoice
	if inv == nil {
		return &Error{err: errors.New("telegram: message carries no invoice"), permanent: true}
	}
	_, err := c.bot.SendInvoice(ctx, &tgbot.SendInvoiceParams{
		ChatID: m.ChatID, Title: inv.Title, Description: inv.Description, Payload: inv.Payload,
		Currency: Stars, Prices: []models.LabeledPrice{{Label: inv.Label, Amount: int(inv.Stars)}},
	})
	return c.classify(err)
}

// AnswerPreCheckoutQuery confirms (ok) or refuses, with errMessage shown to the user,
// a payment Telegram is about to take.
func (c *Client) AnswerPreCheckoutQuery(ctx context.Context, id string, ok bool, errMessage string) error {
	p := &tgbot.AnswerPreCheckoutQueryParams{PreCheckoutQueryID: id, OK: ok}
	if !ok {
		p.ErrorMessage = errMessage
	}
	_, err := c.bot.AnswerPreCheckoutQuery(ctx, p)
	return c.classify(err)
}

// RefundStarPayment gives a user back the Stars of one payment.
func (c *Client) RefundStarPayment(ctx context.Context, user int64, chargeID string) error {
	_, err := c.bot.RefundStarPayment(ctx, &tgbot.RefundStarPaymentParams{UserID: user, TelegramPaymentChargeID: chargeID})
	return c.classify(err)
}

// Description is the text of a Bot API refusal ("Bad Request: CHARGE_ALREADY_REFUNDED").
func (e *Error) Description() string { return e.err.Error() }

var errOff = &Error{err: errors.New("telegram sending is off (no bot token)"), permanent: true}

// SendInvoice is never called for a disabled sender; it refuses if it is.
func (Off) SendInvoice(context.Context, store.OutboxMessage) error { return errOff }

// AnswerPreCheckoutQuery refuses: without a bot token nothing can be paid.
func (Off) AnswerPreCheckoutQuery(context.Context, string, bool, string) error { return errOff }

// RefundStarPayment refuses: without a bot token nothing can be refunded.
func (Off) RefundStarPayment(context.Context, int64, string) error { return errOff }
