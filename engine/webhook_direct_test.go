package engine_test

import (
	"bytes"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// creditFailingStore fails the next payment credits, as a store error would.
type creditFailingStore struct {
	engine.Store
	fail atomic.Int64
}

func (s *creditFailingStore) CreditPayment(p store.Payment) (store.Payment, bool, error) {
	if s.fail.Add(-1) >= 0 {
		return store.Payment{}, false, errors.New("ledger unavailable")
	}
	return s.Store.CreditPayment(p)
}

// A successful_payment the store could not credit reaches the inbox from the webhook's
// path (answered 200 once it is there, so Telegram does not resend it), the user
// hears at once, and the inbox sweep credits it once; Telegram's re-delivery of the
// same update is a duplicate.
func TestWebhookPaymentTheStoreCouldNotCreditIsKeptAndRetried(t *testing.T) {
	cs := &creditFailingStore{}
	cs.fail.Store(1)
	env := hangartest.Start(t, hangartest.Options{StarsRate: 20, IdleTimeout: 100 * time.Millisecond, WrapStore: func(s engine.Store) engine.Store {
		cs.Store = s
		return cs
	}})
	const user = 61
	post(t, env, message(1, user, "en", "/topup 5000"))
	invs, ok := env.Telegram.WaitInvoices(1, 10*time.Second)
	if !ok {
		t.Fatal("no invoice sent")
	}
	pay := env.Telegram.PaymentUpdate(2, user, "en", invs[0].Payload, invs[0].Stars, "ch_keep")
	if r := env.PostUpdate(t, pay); r.Status != 200 || bytes.Contains(r.Body, []byte("duplicate")) {
		t.Fatalf("payment the store could not credit: %d %s, want 200", r.Status, r.Body)
	}
	waitText(t, env, user, "could not be credited")
	if n, _ := env.Store.InboxDepth(); n != 1 {
		t.Fatalf("inbox holds %d, want the payment kept for retry", n)
	}
	if r := env.PostUpdate(t, pay); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"duplicate":true`)) {
		t.Fatalf("re-delivery of the kept payment: %d %s, want a duplicate", r.Status, r.Body)
	}
	if b, _ := ledgerOf(t, env, user); b.Available != 0 {
		t.Fatalf("balance %d before the retry", b.Available)
	}
	// The sweep takes inbox entries older than two minutes once nothing is queued.
	env.Clock.Advance(3 * time.Minute)
	waitText(t, env, user, "Payment received")
	env.Settle(t)
	b, l := ledgerOf(t, env, user)
	if b.Available != 5000 || len(l) != 1 || l[0].Kind != store.LedgerTopup {
		t.Fatalf("after the retry: balance %+v, ledger %+v; want 5000 credited once", b, l)
	}
	credited := 0
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == user && strings.Contains(m.Text, "Payment received") {
			credited++
		}
	}
	if credited != 1 {
		t.Fatalf("told %d times that the payment was credited, want 1", credited)
	}
}

// The sender's client language and their /language choice are kept by the update's
// one commit: both are in the store by the time the webhook answers.
func TestWebhookKeepsTheLanguageWithTheUpdate(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{Language: "ko"})
	const user = 71
	check := func(chosen, client string) {
		t.Helper()
		l, err := env.Store.GetUserLanguage(user)
		if err != nil || l.Chosen != chosen || l.Client != client {
			t.Fatalf("language record %+v, %v; want chosen %q, client %q", l, err, chosen, client)
		}
	}
	post(t, env, message(1, user, "en", "/help"))
	check("", "en")
	post(t, env, message(2, user, "en", "/language ko"))
	check("ko", "en")
	waitText(t, env, user, "한국어로")
	post(t, env, message(3, user, "de", "/help"))
	check("ko", "de")
	waitText(t, env, user, "요금제")
}
