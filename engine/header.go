package engine

import (
	"encoding/json"
	"errors"
)

// UpdateHeader is what routing needs from a Telegram update, and the update itself,
// decoded once: the webhook (or the poller) decodes the body into the few fields the
// bot reads, which also validates the whole body as JSON, and the user's actor works
// on that decoded value instead of parsing the body a second time.
type UpdateHeader struct {
	ID     int64
	UserID int64 // 0 when the update has no sender (channel posts)
	// PreCheckout marks a pre_checkout_query, answered on the webhook's path.
	PreCheckout bool
	// update is the decoded update; nil for a header built by hand (a test), which the
	// actor decodes from the raw body.
	update *tgUpdate
}

// The parts of a Telegram update (github.com/go-telegram/bot/models, same JSON names
// and types) the bot reads. Everything else in the body is skipped by the decoder.
type (
	tgUpdate struct {
		ID               int64               `json:"update_id"`
		Message          *tgMessage          `json:"message"`
		EditedMessage    *tgMessage          `json:"edited_message"`
		CallbackQuery    *tgCallbackQuery    `json:"callback_query"`
		PreCheckoutQuery *tgPreCheckoutQuery `json:"pre_checkout_query"`
	}
	tgUser struct {
		ID           int64  `json:"id"`
		FirstName    string `json:"first_name"`
		LanguageCode string `json:"language_code"`
	}
	tgChat struct {
		ID int64 `json:"id"`
	}
	tgMessage struct {
		From              *tgUser              `json:"from"`
		Chat              tgChat               `json:"chat"`
		Text              string               `json:"text"`
		SuccessfulPayment *tgSuccessfulPayment `json:"successful_payment"`
	}
	// tgCallbackMessage is a callback query's message. Telegram sends date 0 for a
	// message the bot can no longer see (models.InaccessibleMessage): the bot then
	// answers in the user's private chat, as it did with models.MaybeInaccessibleMessage.
	tgCallbackMessage struct {
		Date int64  `json:"date"`
		Chat tgChat `json:"chat"`
	}
	tgCallbackQuery struct {
		ID      string             `json:"id"`
		From    *tgUser            `json:"from"`
		Message *tgCallbackMessage `json:"message"`
		Data    string             `json:"data"`
	}
	tgPreCheckoutQuery struct {
		ID             string  `json:"id"`
		From           *tgUser `json:"from"`
		Currency       string  `json:"currency"`
		TotalAmount    int     `json:"total_amount"`
		InvoicePayload string  `json:"invoice_payload"`
	}
	tgSuccessfulPayment struct {
		Currency                string `json:"currency"`
		TotalAmount             int    `json:"total_amount"`
		InvoicePayload          string `json:"invoice_payload"`
		TelegramPaymentChargeID string `json:"telegram_payment_charge_id"`
	}
)

// accessible is the chat of a callback query's message the bot can still see.
func (m *tgCallbackMessage) accessible() (tgChat, bool) {
	if m == nil || m.Date == 0 {
		return tgChat{}, false
	}
	return m.Chat, true
}

type fromOnly struct {
	From *struct {
		ID int64 `json:"id"`
	} `json:"from"`
}

type headerJSON struct {
	UpdateID      int64     `json:"update_id"`
	Message       *fromOnly `json:"message"`
	EditedMessage *fromOnly `json:"edited_message"`
	CallbackQuery *fromOnly `json:"callback_query"`
	PreCheckout   *fromOnly `json:"pre_checkout_query"`
}

// ParseUpdateHeader decodes an update once: its id, its sender, and the fields the bot
// reads.
//
// A body that is valid JSON but has a field the bot reads in a type it does not expect
// (message.text a number, say) is judged as before this decoder existed: only the
// routing fields decide whether it is refused, and the actor finds nothing to answer
// in it (as it did when the whole models.Update failed to decode).
func ParseUpdateHeader(raw []byte) (UpdateHeader, error) {
	u := new(tgUpdate)
	err := json.Unmarshal(raw, u)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return headerOf(u), nil
	case errors.As(err, &typeErr):
		h, err := parseRoutingHeader(raw)
		if err != nil {
			return UpdateHeader{}, err
		}
		h.update = &tgUpdate{ID: h.ID}
		if h.PreCheckout {
			// Answered on its own, as when only the query was decoded for the answer.
			var q struct {
				Query *tgPreCheckoutQuery `json:"pre_checkout_query"`
			}
			if json.Unmarshal(raw, &q) == nil {
				h.update.PreCheckoutQuery = q.Query
			}
		}
		return h, nil
	default:
		return UpdateHeader{}, err
	}
}

// headerOf is the routing header of a decoded update: the first sender found, in the
// order parseRoutingHeader looks.
func headerOf(u *tgUpdate) UpdateHeader {
	h := UpdateHeader{ID: u.ID, PreCheckout: u.PreCheckoutQuery != nil, update: u}
	switch {
	case u.Message != nil && u.Message.From != nil:
		h.UserID = u.Message.From.ID
	case u.EditedMessage != nil && u.EditedMessage.From != nil:
		h.UserID = u.EditedMessage.From.ID
	case u.CallbackQuery != nil && u.CallbackQuery.From != nil:
		h.UserID = u.CallbackQuery.From.ID
	case u.PreCheckoutQuery != nil && u.PreCheckoutQuery.From != nil:
		h.UserID = u.PreCheckoutQuery.From.ID
	}
	return h
}

// from is the query's sender; a query without one is from user 0 (as models.User's
// zero value was).
func (q *tgCallbackQuery) from() *tgUser {
	if q.From == nil {
		return &tgUser{}
	}
	return q.From
}

// parseRoutingHeader decodes only an update's id and sender.
func parseRoutingHeader(raw []byte) (UpdateHeader, error) {
	var h headerJSON
	if err := json.Unmarshal(raw, &h); err != nil {
		return UpdateHeader{}, err
	}
	out := UpdateHeader{ID: h.UpdateID, PreCheckout: h.PreCheckout != nil}
	for _, f := range []*fromOnly{h.Message, h.EditedMessage, h.CallbackQuery, h.PreCheckout} {
		if f != nil && f.From != nil {
			out.UserID = f.From.ID
			break
		}
	}
	return out, nil
}

// decodedUpdate is the update a header carries, or raw decoded now (a header built by
// hand, an inbox entry re-delivered after a restart). A body that no longer decodes
// gives an empty update: there is nothing to answer in it.
func decodedUpdate(h UpdateHeader, raw []byte) *tgUpdate {
	if h.update != nil {
		return h.update
	}
	if parsed, err := ParseUpdateHeader(raw); err == nil && parsed.update != nil {
		return parsed.update
	}
	return &tgUpdate{}
}
