package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// A Stars payment is credited once across a SIGKILL: killed right after the webhook
// acknowledged the successful_payment, the daemon re-delivers it from its inbox at the
// next start, and Telegram delivering it again (same update, another update id) after
// that moves nothing. A Korean client is answered in Korean with won amounts.
func TestStarsPaymentCreditedOnceAcrossSIGKILL(t *testing.T) {
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	dir := t.TempDir()
	env := []string{"HANGAR_BOT_TOKEN=" + hangartest.BotToken, "HANGAR_TELEGRAM_API=" + tg.URL(),
		"HANGAR_STARS_RATE=20", "HANGAR_LANGUAGE=ko"}
	d := startDaemon(t, dir, env...)
	post := func(d *daemon, body []byte) {
		t.Helper()
		r := hangartest.Do(t, "POST", d.URL+"/webhook", body, "X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret)
		if r.Status != http.StatusOK {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
	}
	const user = 4242
	topup, _ := json.Marshal(map[string]any{"update_id": 1, "message": map[string]any{
		"message_id": 1, "date": 1764417600, "text": "/topup 5000",
		"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada", "language_code": "ko"},
		"chat": map[string]any{"id": user, "type": "private"},
	}})
	post(d, topup)
	invs, ok := tg.WaitInvoices(1, 15*time.Second)
	if !ok {
		t.Fatalf("no invoice\n%s", d.logs.String())
	}
	inv := invs[0]
	post(d, telegramfake.PreCheckoutUpdate(2, "q1", user, "ko", inv.Payload, inv.Stars))
	if a, ok := tg.WaitPreCheckout("q1", 5*time.Second); !ok || !a.OK {
		t.Fatalf("pre-checkout answer %+v (answered: %v)", a, ok)
	}
	pay := tg.PaymentUpdate(3, user, "ko", inv.Payload, inv.Stars, "charge-crash")
	post(d, pay)
	d.kill() // acknowledged; processed or not, nobody knows

	d = startDaemon(t, dir, env...)
	post(d, pay)
	post(d, tg.PaymentUpdate(4, user, "ko", inv.Payload, inv.Stars, "charge-crash"))
	var user1 struct {
		Balance struct {
			Available int64 `json:"available"`
		} `json:"balance"`
		Ledger []struct {
			Kind string `json:"kind"`
		} `json:"ledger"`
	}
	hangartest.WaitFor(t, 15*time.Second, "the payment credited and the re-deliveries answered", func() bool {
		n := 0
		for _, m := range tg.Messages() {
			if m.ChatID == user && strings.Contains(m.Text, "결제 완료") {
				n++
			}
		}
		return n >= 2
	})
	d.admin(t, "GET", fmt.Sprintf("/admin/users/%d", user), nil, &user1)
	topups := 0
	for _, e := range user1.Ledger {
		if e.Kind == "topup" {
			topups++
		}
	}
	if user1.Balance.Available != 5000 || topups != 1 {
		t.Fatalf("balance %d with %d topup entries; want 5000 credited once\n%s", user1.Balance.Available, topups, d.logs.String())
	}
	for _, m := range tg.Messages() {
		if m.ChatID == user && strings.Contains(m.Text, "결제 완료") && !strings.Contains(m.Text, "5,000원") {
			t.Errorf("Korean payment notice without won: %q", m.Text)
		}
	}
}
