package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// Telegram tells the bot of a refund it made itself (a dispute): a message with
// refunded_payment. The Stars went back to the user, so the credit must leave the
// balance (or at least the payment must stop being "paid" and refundable again).
func TestRefundedPaymentFromTelegramTakesTheCreditBack(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{StarsRate: 20})
	post(t, env, message(1, 42, "en", "/topup 5000"))
	invs, _ := env.Telegram.WaitInvoices(1, 10*time.Second)
	post(t, env, env.Telegram.PaymentUpdate(2, 42, "en", invs[0].Payload, invs[0].Stars, "ch_disputed"))
	waitText(t, env, 42, "Payment received")
	b, _ := json.Marshal(map[string]any{"update_id": 3, "message": map[string]any{
		"message_id": 3, "date": 1764417600,
		"from": map[string]any{"id": 42, "is_bot": false, "first_name": "Ada"},
		"chat": map[string]any{"id": 42, "type": "private"},
		"refunded_payment": map[string]any{
			"currency": "XTR", "total_amount": invs[0].Stars, "invoice_payload": invs[0].Payload,
			"telegram_payment_charge_id": "ch_disputed",
		},
	}})
	post(t, env, b)
	env.Settle(t)
	bal, _ := ledgerOf(t, env, 42)
	p, _ := env.Store.GetPayment("ch_disputed")
	if bal.Available != 0 || p.Status == store.PaymentPaid {
		t.Fatalf("after Telegram refunded ch_disputed: balance %+v, payment %+v; the user keeps the credit and the Stars", bal, p)
	}
}
