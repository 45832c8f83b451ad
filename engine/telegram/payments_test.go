package telegram_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/engine/telegram"
	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/store"
)

// Telegram sends pre_checkout_query only to a bot that asks for it; without it every
// Stars payment times out at the pre-checkout.
func TestAllowedUpdatesAskForPreCheckout(t *testing.T) {
	for _, want := range []string{"message", "callback_query", "pre_checkout_query"} {
		if !slices.Contains(telegram.AllowedUpdates, want) {
			t.Errorf("AllowedUpdates %v lacks %s", telegram.AllowedUpdates, want)
		}
	}
}

func TestStarsMethodsOverTheBotAPI(t *testing.T) {
	fake := telegramfake.New("1:tok")
	defer fake.Close()
	c, err := telegram.New("1:tok", fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = c.SendInvoice(ctx, store.OutboxMessage{ChatID: 7, Text: "top-up", Invoice: &store.InvoiceRequest{
		Title: "Top-up", Description: "Adds KRW 5,000", Payload: "topup:7:5000:0123456789abcdef", Label: "KRW 5,000", Stars: 250}})
	if err != nil {
		t.Fatal(err)
	}
	invs := fake.Invoices()
	if len(invs) != 1 || invs[0].Currency != "XTR" || invs[0].ProviderToken != "" || invs[0].Stars != 250 || invs[0].Payload != "topup:7:5000:0123456789abcdef" {
		t.Fatalf("invoice as Telegram got it: %+v", invs)
	}
	if err := c.AnswerPreCheckoutQuery(ctx, "q1", false, "expired"); err != nil {
		t.Fatal(err)
	}
	if err := c.AnswerPreCheckoutQuery(ctx, "q2", true, "ignored when ok"); err != nil {
		t.Fatal(err)
	}
	got := fake.PreCheckoutAnswers()
	if len(got) != 2 || got[0].OK || got[0].ErrorMessage != "expired" || !got[1].OK || got[1].ErrorMessage != "" {
		t.Fatalf("answers %+v", got)
	}
	fake.PaymentUpdate(1, 7, "", "p", 250, "ch")
	if err := c.RefundStarPayment(ctx, 7, "ch"); err != nil {
		t.Fatal(err)
	}
	err = c.RefundStarPayment(ctx, 7, "ch")
	var te *telegram.Error
	if !errors.As(err, &te) || !te.Permanent() || !strings.Contains(te.Description(), "CHARGE_ALREADY_REFUNDED") {
		t.Fatalf("second refund: %v", err)
	}
	if err := c.RefundStarPayment(ctx, 8, "ch"); err == nil {
		t.Fatal("a refund to someone who did not pay was accepted")
	}
}
