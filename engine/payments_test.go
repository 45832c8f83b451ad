package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// message is a text message update from user whose client speaks lang.
func message(updateID, user int64, lang, text string) []byte {
	from := map[string]any{"id": user, "is_bot": false, "first_name": "Ada"}
	if lang != "" {
		from["language_code"] = lang
	}
	b, _ := json.Marshal(map[string]any{"update_id": updateID, "message": map[string]any{
		"message_id": updateID, "date": 1764417600, "text": text, "from": from,
		"chat": map[string]any{"id": user, "type": "private"},
	}})
	return b
}

func post(t *testing.T, env *hangartest.Env, body []byte) {
	t.Helper()
	if r := env.PostUpdate(t, body); r.Status != http.StatusOK {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
}

// waitText waits for a message to chat containing want, and returns it.
func waitText(t *testing.T, env *hangartest.Env, chat int64, want string) string {
	t.Helper()
	var got string
	hangartest.WaitFor(t, 10*time.Second, fmt.Sprintf("a message to %d containing %q", chat, want), func() bool {
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == chat && strings.Contains(m.Text, want) {
				got = m.Text
				return true
			}
		}
		return false
	})
	return got
}

func ledgerOf(t *testing.T, env *hangartest.Env, user int64) (store.Balance, []store.LedgerEntry) {
	t.Helper()
	b, err := env.Store.GetBalance(user)
	if err != nil {
		t.Fatal(err)
	}
	l, err := env.Store.Ledger(user, 100)
	if err != nil {
		t.Fatal(err)
	}
	return b, l
}

func TestStarsTopUpPreCheckoutCreditAndRefund(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{StarsRate: 20})
	const user = 42
	post(t, env, message(1, user, "ko", "/topup 5,000원"))
	invs, ok := env.Telegram.WaitInvoices(1, 10*time.Second)
	if !ok {
		t.Fatal("no invoice sent")
	}
	inv := invs[0]
	if inv.Currency != "XTR" || inv.ProviderToken != "" || inv.Stars != 250 || inv.ChatID != user {
		t.Fatalf("invoice %+v: want 250 XTR (5,000 KRW at 20 a star) with no provider token", inv)
	}
	if !strings.Contains(inv.Description, "5,000원") {
		t.Errorf("a Korean client's invoice says %q", inv.Description)
	}

	// Pre-checkout: answered before the webhook returns, ok only for the real payload.
	forged := strings.Replace(inv.Payload, ":5000:", ":500000:", 1)
	for i, tc := range []struct {
		name    string
		user    int64
		payload string
		stars   int64
		ok      bool
	}{
		{"valid", user, inv.Payload, 250, true},
		{"forged amount", user, forged, 250, false},
		{"fewer stars", user, inv.Payload, 1, false},
		{"someone else", 43, inv.Payload, 250, false},
		{"unknown nonce", user, "topup:42:5000:0123456789abcdef", 250, false},
		{"not ours", user, "hello", 250, false},
	} {
		id := fmt.Sprintf("pcq%d", i)
		start := time.Now()
		post(t, env, telegramfake.PreCheckoutUpdate(int64(10+i), id, tc.user, "ko", tc.payload, tc.stars))
		answers := env.Telegram.PreCheckoutAnswers()
		var got *telegramfake.PreCheckoutAnswer
		for _, a := range answers {
			if a.ID == id {
				got = &a
			}
		}
		switch {
		case got == nil:
			t.Errorf("%s: pre_checkout_query not answered by the time the webhook returned", tc.name)
		case got.OK != tc.ok:
			t.Errorf("%s: answered ok=%v, want %v (%q)", tc.name, got.OK, tc.ok, got.ErrorMessage)
		case !got.OK && got.ErrorMessage == "":
			t.Errorf("%s: refused with no message", tc.name)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: the answer took %v", tc.name, d)
		}
	}

	// The payment: the same update twice, then the same charge under another update id.
	pay := env.Telegram.PaymentUpdate(100, user, "ko", inv.Payload, 250, "ch_1")
	post(t, env, pay)
	post(t, env, pay)
	waitText(t, env, user, "결제 완료")
	post(t, env, env.Telegram.PaymentUpdate(101, user, "ko", inv.Payload, 250, "ch_1"))
	hangartest.WaitFor(t, 10*time.Second, "the second delivery answered", func() bool {
		n := 0
		for _, m := range env.Telegram.Messages() {
			if strings.Contains(m.Text, "결제 완료") {
				n++
			}
		}
		return n == 2
	})
	b, l := ledgerOf(t, env, user)
	if b.Available != 5000 || len(l) != 1 || l[0].Kind != store.LedgerTopup || !strings.Contains(l[0].Note, "ch_1") {
		t.Fatalf("after three deliveries: balance %+v, ledger %+v; want 5000 credited once", b, l)
	}
	// The invoice is single-use: its pre-checkout is refused once paid.
	post(t, env, telegramfake.PreCheckoutUpdate(20, "again", user, "ko", inv.Payload, 250))
	if a, _ := env.Telegram.WaitPreCheckout("again", time.Second); a.OK {
		t.Error("a paid invoice passed pre-checkout again")
	}

	var page struct{ Payments []store.Payment }
	env.Admin(t, http.MethodGet, "/admin/payments", nil).JSON(t, &page)
	if len(page.Payments) != 1 || page.Payments[0].ChargeID != "ch_1" || page.Payments[0].Amount != 5000 {
		t.Fatalf("GET /admin/payments = %+v", page)
	}

	// Refund: once, and the second ask is refused.
	r := env.Admin(t, http.MethodPost, "/admin/payments/ch_1/refund", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", r.Status, r.Body)
	}
	if r := env.Admin(t, http.MethodPost, "/admin/payments/ch_1/refund", nil); r.Status != http.StatusConflict {
		t.Fatalf("second refund: %d %s, want 409", r.Status, r.Body)
	}
	if r := env.Admin(t, http.MethodPost, "/admin/payments/nope/refund", nil); r.Status != http.StatusNotFound {
		t.Fatalf("refund of an unknown charge: %d %s, want 404", r.Status, r.Body)
	}
	b, l = ledgerOf(t, env, user)
	if b.Available != 0 || len(l) != 2 || l[1].Kind != store.LedgerPaymentRefund {
		t.Fatalf("after the refund: balance %+v, ledger %+v", b, l)
	}
	if got := env.Telegram.Refunds(); len(got) != 1 || got[0].ChargeID != "ch_1" || got[0].UserID != user {
		t.Fatalf("refundStarPayment calls %+v", got)
	}
	waitText(t, env, user, "환불")

	for name, want := range map[string]float64{
		`hangar_stars_precheckout_total{result="ok"}`:      1,
		`hangar_stars_precheckout_total{result="refused"}`: 6, // five forged, one paid already
		`hangar_stars_payments_total{result="credited"}`:   1,
		`hangar_stars_payments_total{result="duplicate"}`:  1, // the same update twice is dropped at the webhook
		`hangar_stars_refunds_total{result="refunded"}`:    1,
	} {
		if got := env.Metric(t, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// A refund the user's balance no longer covers is refused and moves nothing.
func TestStarsRefundRefusedWhenSpent(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{StarsRate: 20})
	const user = 44
	post(t, env, message(1, user, "en", "/topup 6000"))
	invs, ok := env.Telegram.WaitInvoices(1, 10*time.Second)
	if !ok {
		t.Fatal("no invoice")
	}
	post(t, env, env.Telegram.PaymentUpdate(2, user, "en", invs[0].Payload, invs[0].Stars, "ch_spent"))
	waitText(t, env, user, "Payment received")
	env.Order(t, user, "sim-nano", "tokyo") // holds 5,000 of the 6,000
	r := env.Admin(t, http.MethodPost, "/admin/payments/ch_spent/refund", nil)
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "refund_uncovered") {
		t.Fatalf("refund of spent money: %d %s, want 409 refund_uncovered", r.Status, r.Body)
	}
	if len(env.Telegram.Refunds()) != 0 {
		t.Fatal("Telegram was asked to refund")
	}
}

func TestTopUpRefusesNonsense(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate int64
		text string
		want string
	}{
		{"off", 0, "/topup 5000", "not switched on"},
		{"no amount", 20, "/topup", "Usage: /topup"},
		{"words", 20, "/topup lots", "is not an amount"},
		{"negative", 20, "/topup -5000", "is not an amount"},
		{"decimals in won", 20, "/topup 5000.5", "is not an amount"},
		{"below a star", 20, "/topup 10", "smallest top-up is KRW 20"},
		{"too many stars", 20, "/topup 300000", "largest top-up is KRW 200,000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := hangartest.Start(t, hangartest.Options{StarsRate: tc.rate})
			post(t, env, message(1, 7, "en", tc.text))
			waitText(t, env, 7, tc.want)
			if n := len(env.Telegram.Invoices()); n != 0 {
				t.Errorf("%d invoices sent", n)
			}
		})
	}
}

func TestBotSpeaksTheUsersLanguage(t *testing.T) {
	dir := t.TempDir()
	env := hangartest.Start(t, hangartest.Options{Dir: dir, Language: "ko"})
	for _, u := range []int64{1, 2, 3} {
		env.Deposit(t, u, 5000)
	}
	post(t, env, message(1, 1, "ko", "/balance"))
	post(t, env, message(2, 2, "en", "/balance"))
	post(t, env, message(3, 3, "de", "/balance")) // a language the bot does not speak: the default
	ko := waitText(t, env, 1, "잔액")
	if !strings.Contains(ko, "5,000원") || strings.Contains(ko, ".00") {
		t.Errorf("Korean balance %q: want 5,000원 with no minor units", ko)
	}
	en := waitText(t, env, 2, "Balance")
	if !strings.Contains(en, "KRW 5,000") {
		t.Errorf("English balance %q", en)
	}
	waitText(t, env, 3, "5,000원")

	post(t, env, message(4, 1, "ko", "/language en"))
	waitText(t, env, 1, "English")
	post(t, env, message(5, 1, "ko", "/help"))
	waitText(t, env, 1, "this list")
	env.Stop()

	// The choice outlives a restart, and beats the client's language_code.
	env = hangartest.Start(t, hangartest.Options{Dir: dir, Language: "ko"})
	post(t, env, message(6, 1, "ko", "/balance"))
	waitText(t, env, 1, "Balance: <b>KRW 5,000</b>")
	post(t, env, message(7, 1, "ko", "/language ko"))
	waitText(t, env, 1, "한국어로")
}
