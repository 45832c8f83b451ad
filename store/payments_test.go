package store

import (
	"errors"
	"testing"
)

func ledgerKinds(t *testing.T, s *Store, user int64) []string {
	t.Helper()
	entries, err := s.Ledger(user, 100)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range entries {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// A charge is credited once whatever delivers it again: a second call in the same
// run, or one after the store is closed and opened again (a restart).
func TestCreditPaymentOncePerCharge(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if err := s.PutInvoice(Invoice{Nonce: "n1", UserID: 5, ChatID: 5, Amount: 5000, Stars: 250}); err != nil {
		t.Fatal(err)
	}
	pay := Payment{ChargeID: "ch_1", UserID: 5, ChatID: 5, Amount: 5000, Stars: 250, Nonce: "n1", UpdateID: 10}
	p, fresh, err := s.CreditPayment(pay)
	if err != nil || !fresh || p.Status != PaymentPaid {
		t.Fatalf("first credit: %+v fresh=%v err=%v", p, fresh, err)
	}
	if _, err := s.GetInvoice("n1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the paid invoice is still there: %v", err)
	}
	pay.UpdateID = 11 // the same charge under another update id
	if _, fresh, err := s.CreditPayment(pay); err != nil || fresh {
		t.Fatalf("second credit: fresh=%v err=%v", fresh, err)
	}
	s.Close()
	s = quietOpen(t, dir)
	defer s.Close()
	if _, fresh, err := s.CreditPayment(pay); err != nil || fresh {
		t.Fatalf("credit after reopening: fresh=%v err=%v", fresh, err)
	}
	b, _ := s.GetBalance(5)
	if b.Available != 5000 {
		t.Errorf("balance %d, want 5000 (credited once)", b.Available)
	}
	if got := ledgerKinds(t, s, 5); len(got) != 1 || got[0] != LedgerTopup {
		t.Errorf("ledger kinds %v, want one topup", got)
	}
	list, err := s.Payments(10)
	if err != nil || len(list) != 1 || list[0].ChargeID != "ch_1" || list[0].UpdateID != 10 {
		t.Errorf("Payments = %+v, %v", list, err)
	}
}

func TestRefund(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spend     int64 // taken from the balance before the refund
		telegram  error // Telegram's answer to the refund
		wantErr   error
		wantAvail int64
		wantKinds []string
		wantState string
	}{
		{name: "refunded", wantAvail: 0, wantKinds: []string{"topup", "refund"}, wantState: PaymentRefunded},
		{name: "balance spent", spend: 1, wantErr: ErrRefundUncovered, wantAvail: 4999, wantKinds: []string{"topup", "hold"}, wantState: PaymentPaid},
		{name: "telegram refuses", telegram: errors.New("CHARGE_NOT_FOUND"), wantAvail: 5000,
			wantKinds: []string{"topup", "refund", "refund_reversed"}, wantState: PaymentPaid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := quietOpen(t, t.TempDir())
			defer s.Close()
			if _, _, err := s.CreditPayment(Payment{ChargeID: "ch", UserID: 5, Amount: 5000, Stars: 250}); err != nil {
				t.Fatal(err)
			}
			if tc.spend > 0 {
				if err := s.update(func(txn *tx) error { return s.moveMoney(txn, 5, LedgerHold, tc.spend, 1, s.now()) }); err != nil {
					t.Fatal(err)
				}
			}
			_, err := s.BeginRefund("ch")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("BeginRefund: %v, want %v", err, tc.wantErr)
			}
			if err == nil {
				// Asked again before Telegram answered: no second move.
				if p, err := s.BeginRefund("ch"); err != nil || p.Status != PaymentRefunding {
					t.Fatalf("BeginRefund again: %+v %v", p, err)
				}
				if tc.telegram != nil {
					_, err = s.ReverseRefund("ch", tc.telegram.Error())
				} else {
					_, err = s.FinishRefund("ch")
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if tc.wantState == PaymentRefunded {
				if _, err := s.BeginRefund("ch"); !errors.Is(err, ErrAlreadyRefunded) {
					t.Errorf("a refunded payment refunds again: %v", err)
				}
			}
			b, _ := s.GetBalance(5)
			if b.Available != tc.wantAvail {
				t.Errorf("available %d, want %d", b.Available, tc.wantAvail)
			}
			if got := ledgerKinds(t, s, 5); !equalStrings(got, tc.wantKinds) {
				t.Errorf("ledger kinds %v, want %v", got, tc.wantKinds)
			}
			if p, _ := s.GetPayment("ch"); p.Status != tc.wantState {
				t.Errorf("payment status %s, want %s", p.Status, tc.wantState)
			}
		})
	}
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if _, err := s.BeginRefund("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("refund of an unknown charge: %v", err)
	}
}

func TestUserLanguageRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	if l, err := s.GetUserLanguage(9); err != nil || l != (UserLanguage{}) {
		t.Fatalf("no record: %+v %v", l, err)
	}
	if err := s.SetUserLanguage(9, UserLanguage{Chosen: "en", Client: "ko"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = quietOpen(t, dir)
	defer s.Close()
	if l, err := s.GetUserLanguage(9); err != nil || l.Chosen != "en" || l.Client != "ko" {
		t.Fatalf("after reopening: %+v %v", l, err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A refund Telegram made itself takes the credit back once: as far as the available
// balance covers it (the rest is noted as spent), once however often Telegram tells
// of it, and not again for a refund of hangar's own already under way.
func TestRecordTelegramRefund(t *testing.T) {
	cases := []struct {
		name           string
		spend          int64 // moved out of the balance before the refund
		ownRefundFirst bool
		wantTaken      int64
		wantAvailable  int64
	}{
		{"all of it", 0, false, 5000, 0},
		{"partly spent", 3000, false, 2000, 0},
		{"after hangar's own refund began", 0, true, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := quietOpen(t, t.TempDir())
			defer s.Close()
			if _, _, err := s.CreditPayment(Payment{ChargeID: "ch", UserID: 5, ChatID: 5, Amount: 5000, Stars: 250, UpdateID: 1}); err != nil {
				t.Fatal(err)
			}
			if tc.spend > 0 {
				if _, err := s.CreateOrder(Order{TelegramUserID: 5, SpecID: "s", Region: "r", Provider: "sim", PricePaid: tc.spend}, OrderLimit{}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.ownRefundFirst {
				if _, err := s.BeginRefund("ch"); err != nil {
					t.Fatal(err)
				}
			}
			p, taken, uncovered, err := s.RecordTelegramRefund("ch")
			if err != nil || p.Status != PaymentRefunded || taken != tc.wantTaken {
				t.Fatalf("refund: %+v taken %d uncovered %d err %v; want refunded, %d taken", p, taken, uncovered, err, tc.wantTaken)
			}
			if again, taken, _, err := s.RecordTelegramRefund("ch"); err != nil || taken != 0 || again.Status != PaymentRefunded {
				t.Fatalf("told again: taken %d, %v", taken, err)
			}
			if b, _ := s.GetBalance(5); b.Available != tc.wantAvailable {
				t.Fatalf("available %d, want %d", b.Available, tc.wantAvailable)
			}
			if _, _, _, err := s.RecordTelegramRefund("ch_unknown"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("an unknown charge: %v", err)
			}
		})
	}
}
