package engine

import (
	"encoding/json"
	"testing"

	"github.com/go-telegram/bot/models"
)

// FuzzParseUpdateHeader holds the one decoder of an update to what the two it replaced
// said of the same body: the routing header (id, sender, pre-checkout) and its error
// are those of the routing-only decode, and every field the bot reads is the one the
// whole models.Update held, whenever that decoded.
func FuzzParseUpdateHeader(f *testing.F) {
	for _, seed := range []string{
		`{"update_id":1,"message":{"message_id":3,"date":5,"from":{"id":42,"first_name":"Ann","language_code":"en"},"chat":{"id":42,"type":"private"},"text":"/start"}}`,
		`{"update_id":2,"callback_query":{"id":"q1","from":{"id":7},"message":{"message_id":1,"date":9,"chat":{"id":-100}},"data":"oc:0123456789abcdef"}}`,
		`{"update_id":3,"callback_query":{"id":"q2","from":{"id":7},"message":{"message_id":1,"date":0,"chat":{"id":-100}},"data":"ox:x"}}`,
		`{"update_id":4,"callback_query":{"id":"q3","data":"x"}}`,
		`{"update_id":5,"pre_checkout_query":{"id":"p","from":{"id":8,"language_code":"ko"},"currency":"XTR","total_amount":10,"invoice_payload":"hp:8:100:0123456789abcdef"}}`,
		`{"update_id":6,"message":{"date":1,"from":{"id":8},"chat":{"id":8},"successful_payment":{"currency":"XTR","total_amount":10,"invoice_payload":"hp:8:100:0123456789abcdef","telegram_payment_charge_id":"c1","provider_payment_charge_id":""}}}`,
		`{"update_id":7,"edited_message":{"from":{"id":7},"chat":{"id":7},"text":"/help"}}`,
		`{"update_id":8,"message":{"chat":{"id":1}},"edited_message":{"from":{"id":9}}}`,
		`{"update_id":9,"message":{"text":5,"from":{"id":3}}}`,
		`{"update_id":10,"message":{"from":{"id":"x"}}}`,
		`{"update_id":11,"MESSAGE":{"From":{"ID":4},"Text":"/plans"},"message":{"text":"/help"}}`,
		`{"update_id":1.5}`, `[]`, `null`, ``, "\x00", `{"update_id":12,"channel_post":{"chat":{"id":-1},"text":"hi"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := ParseUpdateHeader(raw)
		want, wantErr := parseRoutingHeader(raw)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, the routing decode's %v", raw, err, wantErr)
		}
		if err != nil {
			return
		}
		if got.ID != want.ID || got.UserID != want.UserID || got.PreCheckout != want.PreCheckout {
			t.Fatalf("%q: header %+v, the routing decode's %+v", raw, got, want)
		}
		u := got.update
		if u == nil {
			t.Fatalf("%q: decoded header without its update", raw)
		}
		if decodedUpdate(UpdateHeader{}, raw) == nil {
			t.Fatalf("%q: the actor's fallback decode gave nil", raw)
		}
		var m models.Update
		if json.Unmarshal(raw, &m) != nil {
			return // the actor answered nothing for it before; it may answer now
		}
		if u.ID != m.ID {
			t.Fatalf("%q: id %d, models %d", raw, u.ID, m.ID)
		}
		sameMessage(t, raw, "message", u.Message, m.Message)
		sameMessage(t, raw, "edited_message", u.EditedMessage, m.EditedMessage)
		if (u.CallbackQuery == nil) != (m.CallbackQuery == nil) {
			t.Fatalf("%q: callback_query presence differs", raw)
		}
		if cq, mq := u.CallbackQuery, m.CallbackQuery; cq != nil {
			sameUser(t, raw, "callback_query.from", cq.from(), &mq.From)
			if cq.ID != mq.ID || cq.Data != mq.Data {
				t.Fatalf("%q: callback id/data %q/%q, models %q/%q", raw, cq.ID, cq.Data, mq.ID, mq.Data)
			}
			chat, ok := cq.Message.accessible()
			if ok != (mq.Message.Message != nil) || (ok && chat.ID != mq.Message.Message.Chat.ID) {
				t.Fatalf("%q: callback message %v %d, models %+v", raw, ok, chat.ID, mq.Message)
			}
			mu := models.Update{CallbackQuery: mq}
			if chatID(u) != chatIDModels(&mu) {
				t.Fatalf("%q: chat %d, models %d", raw, chatID(u), chatIDModels(&mu))
			}
		}
		if (u.PreCheckoutQuery == nil) != (m.PreCheckoutQuery == nil) {
			t.Fatalf("%q: pre_checkout_query presence differs", raw)
		}
		if q, mq := u.PreCheckoutQuery, m.PreCheckoutQuery; q != nil {
			if q.ID != mq.ID || q.Currency != mq.Currency || q.TotalAmount != mq.TotalAmount || q.InvoicePayload != mq.InvoicePayload {
				t.Fatalf("%q: pre_checkout_query %+v, models %+v", raw, q, mq)
			}
			if (q.From == nil) != (mq.From == nil) {
				t.Fatalf("%q: pre_checkout_query.from presence differs", raw)
			}
			if q.From != nil {
				sameUser(t, raw, "pre_checkout_query.from", q.From, mq.From)
			}
		}
	})
}

func sameMessage(t *testing.T, raw []byte, what string, u *tgMessage, m *models.Message) {
	t.Helper()
	if (u == nil) != (m == nil) {
		t.Fatalf("%q: %s presence differs", raw, what)
	}
	if u == nil {
		return
	}
	if u.Text != m.Text || u.Chat.ID != m.Chat.ID {
		t.Fatalf("%q: %s text/chat %q/%d, models %q/%d", raw, what, u.Text, u.Chat.ID, m.Text, m.Chat.ID)
	}
	if (u.From == nil) != (m.From == nil) {
		t.Fatalf("%q: %s.from presence differs", raw, what)
	}
	if u.From != nil {
		sameUser(t, raw, what+".from", u.From, m.From)
	}
	if (u.SuccessfulPayment == nil) != (m.SuccessfulPayment == nil) {
		t.Fatalf("%q: %s.successful_payment presence differs", raw, what)
	}
	if p, mp := u.SuccessfulPayment, m.SuccessfulPayment; p != nil {
		if p.Currency != mp.Currency || p.TotalAmount != mp.TotalAmount || p.InvoicePayload != mp.InvoicePayload || p.TelegramPaymentChargeID != mp.TelegramPaymentChargeID {
			t.Fatalf("%q: %s.successful_payment %+v, models %+v", raw, what, p, mp)
		}
	}
}

func sameUser(t *testing.T, raw []byte, what string, u *tgUser, m *models.User) {
	t.Helper()
	if u.ID != m.ID || u.FirstName != m.FirstName || u.LanguageCode != m.LanguageCode {
		t.Fatalf("%q: %s %+v, models %+v", raw, what, u, m)
	}
}

// chatIDModels is chatID as it read a models.Update before the decoder (kept to
// compare against).
func chatIDModels(u *models.Update) int64 {
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
