package telegramfake

import (
	"encoding/json"

	"net/http"
	"strconv"
	"time"
)

// Invoice is one accepted sendInvoice call.
type Invoice struct {
	ChatID        int64
	Title         string
	Description   string
	Payload       string
	Currency      string
	ProviderToken string
	Stars         int64 // the one price's amount: Stars invoices take exactly one
	Label         string
}

// PreCheckoutAnswer is one answerPreCheckoutQuery call.
type PreCheckoutAnswer struct {
	ID           string
	OK           bool
	ErrorMessage string
	At           time.Time
}

// Refund is one accepted refundStarPayment call.
type Refund struct {
	UserID   int64
	ChargeID string
}

type payState struct {
	invoices []Invoice
	answers  []PreCheckoutAnswer
	refunds  []Refund
	charges  map[string]int64 // charge id → the user who paid it
	refunded map[string]bool
}

// Invoices returns the accepted invoices, in arrival order.
func (s *Server) Invoices() []Invoice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Invoice(nil), s.pay.invoices...)
}

// PreCheckoutAnswers returns every answerPreCheckoutQuery, in arrival order.
func (s *Server) PreCheckoutAnswers() []PreCheckoutAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PreCheckoutAnswer(nil), s.pay.answers...)
}

// Refunds returns the accepted refunds.
func (s *Server) Refunds() []Refund {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Refund(nil), s.pay.refunds...)
}

// waitFor blocks until cond (called under the fake's lock) holds or timeout passes.
func (s *Server) waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// WaitInvoices blocks until n invoices were accepted or timeout passes.
func (s *Server) WaitInvoices(n int, timeout time.Duration) ([]Invoice, bool) {
	ok := s.waitFor(timeout, func() bool { return len(s.pay.invoices) >= n })
	return s.Invoices(), ok
}

// WaitPreCheckout blocks until the query id was answered or timeout passes.
func (s *Server) WaitPreCheckout(id string, timeout time.Duration) (PreCheckoutAnswer, bool) {
	var got PreCheckoutAnswer
	ok := s.waitFor(timeout, func() bool {
		for _, a := range s.pay.answers {
			if a.ID == id {
				got = a
				return true
			}
		}
		return false
	})
	return got, ok
}

// PreCheckoutUpdate is the update Telegram sends when user is about to pay an
// invoice: hangar must answer it within 10 s.
func PreCheckoutUpdate(updateID int64, queryID string, user int64, lang, payload string, stars int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"pre_checkout_query": map[string]any{
			"id": queryID, "from": userJSON(user, lang), "currency": "XTR", "total_amount": stars, "invoice_payload": payload,
		},
	})
	return b
}

// PaymentUpdate is the message Telegram sends once user paid: a successful_payment
// with its charge id. The fake remembers the charge, so refundStarPayment accepts it.
func (s *Server) PaymentUpdate(updateID int64, user int64, lang, payload string, stars int64, chargeID string) []byte {
	s.mu.Lock()
	if s.pay.charges == nil {
		s.pay.charges = map[string]int64{}
	}
	s.pay.charges[chargeID] = user
	s.mu.Unlock()
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID, "date": time.Now().Unix(), "from": userJSON(user, lang),
			"chat": map[string]any{"id": user, "type": "private"},
			"successful_payment": map[string]any{
				"currency": "XTR", "total_amount": stars, "invoice_payload": payload,
				"telegram_payment_charge_id": chargeID, "provider_payment_charge_id": "",
			},
		},
	})
	return b
}

func userJSON(user int64, lang string) map[string]any {
	u := map[string]any{"id": user, "is_bot": false, "first_name": "Ada"}
	if lang != "" {
		u["language_code"] = lang
	}
	return u
}

// handlePayments answers the payment methods; false means not one.
func (s *Server) handlePayments(w http.ResponseWriter, method string, p map[string]string) bool {
	switch method {
	case "sendInvoice":
		s.sendInvoice(w, p)
	case "answerPreCheckoutQuery":
		ok := p["ok"] == "true"
		if p["pre_checkout_query_id"] == "" || (!ok && p["error_message"] == "") {
			// Telegram wants the error message the user will see with every refusal.
			writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: QUERY_ID_INVALID or ERROR_MESSAGE_EMPTY"})
			return true
		}
		s.mu.Lock()
		s.pay.answers = append(s.pay.answers, PreCheckoutAnswer{ID: p["pre_checkout_query_id"], OK: ok, ErrorMessage: p["error_message"], At: time.Now()})
		s.notify()
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	case "refundStarPayment":
		user, _ := strconv.ParseInt(p["user_id"], 10, 64)
		charge := p["telegram_payment_charge_id"]
		s.mu.Lock()
		payer, known := s.pay.charges[charge]
		switch {
		case !known || payer != user:
			s.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: CHARGE_NOT_FOUND"})
			return true
		case s.pay.refunded[charge]:
			s.mu.Unlock()
			writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: CHARGE_ALREADY_REFUNDED"})
			return true
		}
		if s.pay.refunded == nil {
			s.pay.refunded = map[string]bool{}
		}
		s.pay.refunded[charge] = true
		s.pay.refunds = append(s.pay.refunds, Refund{UserID: user, ChargeID: charge})
		s.notify()
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	default:
		return false
	}
	return true
}

func (s *Server) sendInvoice(w http.ResponseWriter, p map[string]string) {
	chatID, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil || chatID == 0 {
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: chat not found"})
		return
	}
	var prices []struct {
		Label  string `json:"label"`
		Amount int64  `json:"amount"`
	}
	_ = json.Unmarshal([]byte(p["prices"]), &prices)
	inv := Invoice{ChatID: chatID, Title: p["title"], Description: p["description"], Payload: p["payload"],
		Currency: p["currency"], ProviderToken: p["provider_token"]}
	switch {
	case inv.Title == "" || inv.Description == "" || inv.Payload == "":
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: title, description and payload are required"})
		return
	case len(inv.Payload) > 128:
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: INVOICE_PAYLOAD_INVALID"})
		return
	case inv.Currency == "XTR" && inv.ProviderToken != "":
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: provider_token must be empty for payments in Telegram Stars"})
		return
	case inv.Currency == "XTR" && (len(prices) != 1 || prices[0].Amount <= 0):
		writeJSON(w, http.StatusBadRequest, apiResponse{ErrorCode: 400, Description: "Bad Request: CURRENCY_TOTAL_AMOUNT_INVALID"})
		return
	}
	if len(prices) > 0 {
		inv.Stars, inv.Label = prices[0].Amount, prices[0].Label
	}
	if s.answerBlocked(w, chatID) {
		return
	}
	s.mu.Lock()
	s.pay.invoices = append(s.pay.invoices, inv)
	id := len(s.messages) + len(s.pay.invoices)
	s.notify()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: map[string]any{
		"message_id": id, "date": time.Now().Unix(), "chat": map[string]any{"id": chatID, "type": "private"},
		"invoice": map[string]any{"title": inv.Title, "description": inv.Description, "start_parameter": "", "currency": inv.Currency, "total_amount": inv.Stars},
	}})
}
