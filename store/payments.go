package store

import (
	"errors"
	"fmt"
	"time"
)

// InvoiceTTL is how long a /topup invoice can be paid: long enough to find the Stars,
// short enough that an old invoice cannot be paid at an old rate.
const InvoiceTTL = 24 * time.Hour

// Ledger kinds of Telegram Stars payments. A topup credits Available; a refund (of a
// topup, not an order) takes it back; a refund Telegram refused is put back as
// refund_reversed.
const (
	LedgerTopup          = "topup"
	LedgerPaymentRefund  = "refund"
	LedgerRefundReversed = "refund_reversed"
)

// Payment states.
const (
	PaymentPaid      = "paid"
	PaymentRefunding = "refunding" // the ledger moved back; Telegram not yet known to have refunded
	PaymentRefunded  = "refunded"
)

var (
	// ErrAlreadyRefunded is a refund of a payment refunded before.
	ErrAlreadyRefunded = errors.New("store: payment already refunded")
	// ErrRefundUncovered is a refund the user's available balance no longer covers
	// (they spent the money).
	ErrRefundUncovered = errors.New("store: the balance no longer covers the refund")
)

// Invoice is a /topup invoice sent and not yet paid. Its nonce is in the invoice's
// payload; the pre-checkout check and the credit both find it here, and the credit
// deletes it, so one invoice pays once.
type Invoice struct {
	Nonce     string    `json:"nonce"`
	UserID    int64     `json:"user_id"`
	ChatID    int64     `json:"chat_id"`
	Amount    int64     `json:"amount"` // minor units of the catalogue currency
	Stars     int64     `json:"stars"`
	CreatedAt time.Time `json:"created_at"`
}

// Payment is one Telegram Stars payment, keyed by its telegram_payment_charge_id.
type Payment struct {
	ChargeID   string    `json:"telegram_payment_charge_id"`
	UserID     int64     `json:"user_id"`
	ChatID     int64     `json:"chat_id"`
	Amount     int64     `json:"amount"`
	Stars      int64     `json:"stars"`
	Nonce      string    `json:"invoice_nonce,omitempty"`
	Status     string    `json:"status"`
	UpdateID   int64     `json:"update_id,omitempty"`
	PaidAt     time.Time `json:"paid_at"`
	RefundedAt time.Time `json:"refunded_at,omitzero"`
	LastError  string    `json:"last_error,omitempty"`
	Seq        uint64    `json:"seq"`
}

// InvoiceRequest is a sendInvoice the outbox delivers in place of a text message.
type InvoiceRequest struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Payload     string `json:"payload"`
	Label       string `json:"label"`
	Stars       int64  `json:"stars"`
}

// PutInvoice stores an invoice until InvoiceTTL.
func (s *Store) PutInvoice(inv Invoice) error {
	inv.CreatedAt = s.now()
	return s.update(func(txn *tx) error { return putRecord(txn, invoiceKey(inv.Nonce), inv, InvoiceTTL) })
}

// GetInvoice reads an unpaid, unexpired invoice.
func (s *Store) GetInvoice(nonce string) (Invoice, error) {
	var inv Invoice
	err := s.view(func(txn *tx) error { return getRecord(txn, invoiceKey(nonce), &inv) })
	if err == nil && s.now().Sub(inv.CreatedAt) > InvoiceTTL {
		return Invoice{}, ErrNotFound
	}
	return inv, err
}

// CreditPayment records a successful payment and credits its amount, in one commit
// whose key is the charge id: a payment Telegram delivers again (the same update, the
// same charge under another update id, or after a crash re-delivers the inbox) finds
// the record and moves no money. fresh reports whether this call credited it. The
// invoice it paid, if still there, is deleted in the same commit.
func (s *Store) CreditPayment(p Payment) (out Payment, fresh bool, err error) {
	if p.ChargeID == "" || p.Amount <= 0 {
		return Payment{}, false, errors.New("store: a payment needs a charge id and a positive amount")
	}
	now := s.now()
	seq, err := s.nextSeq("payment")
	if err != nil {
		return Payment{}, false, err
	}
	err = s.update(func(txn *tx) error {
		switch err := getRecord(txn, paymentKey(p.ChargeID), &out); {
		case err == nil:
			fresh = false
			return nil
		case !errors.Is(err, ErrNotFound):
			return err
		}
		fresh = true
		p.Status, p.PaidAt, p.Seq = PaymentPaid, now, seq
		if err := postLedger(txn, p.UserID, LedgerTopup, p.Amount, p.Amount, "telegram_payment_charge_id "+p.ChargeID, now); err != nil {
			return err
		}
		if err := putRecord(txn, paymentKey(p.ChargeID), &p, 0); err != nil {
			return err
		}
		if err := txn.Set(paymentSeqKey(seq), []byte(p.ChargeID)); err != nil {
			return err
		}
		if p.Nonce != "" {
			if err := txn.Delete(invoiceKey(p.Nonce)); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	if err != nil {
		return Payment{}, false, err
	}
	return out, fresh, nil
}

// GetPayment reads one payment by charge id.
func (s *Store) GetPayment(chargeID string) (Payment, error) {
	var p Payment
	err := s.view(func(txn *tx) error { return getRecord(txn, paymentKey(chargeID), &p) })
	return p, err
}

// Payments lists up to limit payments, newest first.
func (s *Store) Payments(limit int) ([]Payment, error) {
	out := []Payment{}
	err := s.view(func(txn *tx) error {
		return scanPrefix(txn, prefixPaymentSeq, true, func(_, val []byte) (bool, error) {
			var p Payment
			switch err := getRecord(txn, paymentKey(string(val)), &p); {
			case errors.Is(err, ErrNotFound):
				return true, nil
			case err != nil:
				return false, err
			}
			out = append(out, p)
			return len(out) < limit, nil
		})
	})
	return out, err
}

// BeginRefund takes a paid payment's amount back from the balance (ledger kind
// refund) and marks it refunding, in one commit, before Telegram is asked to refund
// the Stars: the money leaves the balance exactly once however often the admin asks,
// and a user cannot spend it while Telegram answers. A payment already refunding is
// returned as is, for the caller to ask Telegram again; one refunded is
// ErrAlreadyRefunded; one whose amount the available balance does not cover is
// ErrRefundUncovered and nothing moves.
func (s *Store) BeginRefund(chargeID string) (Payment, error) {
	now := s.now()
	var p Payment
	err := s.update(func(txn *tx) error {
		if err := getRecord(txn, paymentKey(chargeID), &p); err != nil {
			return err
		}
		switch p.Status {
		case PaymentRefunded:
			return ErrAlreadyRefunded
		case PaymentRefunding:
			return nil
		}
		b, err := getBalance(txn, p.UserID)
		if err != nil {
			return err
		}
		if b.Available < p.Amount {
			return ErrRefundUncovered
		}
		if err := postLedger(txn, p.UserID, LedgerPaymentRefund, p.Amount, -p.Amount, "telegram_payment_charge_id "+p.ChargeID, now); err != nil {
			return err
		}
		p.Status, p.LastError = PaymentRefunding, ""
		return putRecord(txn, paymentKey(chargeID), &p, 0)
	})
	return p, err
}

// FinishRefund records that Telegram refunded the Stars, queueing notes (the user's
// notice) in the same commit so that they are sent once.
func (s *Store) FinishRefund(chargeID string, notes ...OutboxMessage) (Payment, error) {
	now := s.now()
	msgs, err := s.assignIDs(notes, now)
	if err != nil {
		return Payment{}, err
	}
	var p Payment
	err = s.update(func(txn *tx) error {
		if err := getRecord(txn, paymentKey(chargeID), &p); err != nil {
			return err
		}
		if p.Status != PaymentRefunding {
			return nil
		}
		p.Status, p.RefundedAt, p.LastError = PaymentRefunded, now, ""
		if err := putRecord(txn, paymentKey(chargeID), &p, 0); err != nil {
			return err
		}
		return putOutboxAll(txn, msgs)
	})
	return p, err
}

// RecordTelegramRefund records a refund Telegram made on its own (a refunded_payment:
// a dispute, its support) in one commit: a paid payment's credit leaves the available
// balance, as far as it covers it (uncovered is what was already spent), and the
// payment is refunded; one of hangar's own refunds under way is marked done (its money
// left already); one refunded already moves nothing. Left unrecorded, the user kept
// both the credit and the Stars, and the payment stayed refundable again.
func (s *Store) RecordTelegramRefund(chargeID string) (p Payment, taken, uncovered int64, err error) {
	now := s.now()
	err = s.update(func(txn *tx) error {
		taken, uncovered = 0, 0
		if err := getRecord(txn, paymentKey(chargeID), &p); err != nil {
			return err
		}
		switch p.Status {
		case PaymentRefunded:
			return nil
		case PaymentPaid:
			b, err := getBalance(txn, p.UserID)
			if err != nil {
				return err
			}
			taken = min(p.Amount, max(b.Available, 0))
			uncovered = p.Amount - taken
			if taken > 0 {
				if err := postLedger(txn, p.UserID, LedgerPaymentRefund, taken, -taken, "telegram_payment_charge_id "+p.ChargeID+" (refunded by Telegram)", now); err != nil {
					return err
				}
			}
			if uncovered > 0 {
				p.LastError = fmt.Sprintf("refunded by Telegram; %d of it had been spent and could not be taken back", uncovered)
			}
		}
		p.Status, p.RefundedAt = PaymentRefunded, now
		return putRecord(txn, paymentKey(chargeID), &p, 0)
	})
	return p, taken, uncovered, err
}

// ReverseRefund puts the money of a refund Telegram refused back on the balance
// (ledger kind refund_reversed) and marks the payment paid again, with the reason.
func (s *Store) ReverseRefund(chargeID, reason string) (Payment, error) {
	now := s.now()
	var p Payment
	err := s.update(func(txn *tx) error {
		if err := getRecord(txn, paymentKey(chargeID), &p); err != nil {
			return err
		}
		if p.Status != PaymentRefunding {
			return nil
		}
		if err := postLedger(txn, p.UserID, LedgerRefundReversed, p.Amount, p.Amount, "telegram_payment_charge_id "+p.ChargeID, now); err != nil {
			return err
		}
		p.Status, p.LastError = PaymentPaid, reason
		return putRecord(txn, paymentKey(chargeID), &p, 0)
	})
	return p, err
}

// postLedger changes a user's available balance by delta and records it as one
// ledger entry of kind for amount.
func postLedger(txn *tx, user int64, kind string, amount, delta int64, note string, now time.Time) error {
	b, err := getBalance(txn, user)
	if err != nil {
		return err
	}
	b.UserID = user
	b.Available += delta
	if b.Available < 0 {
		return ErrInsufficientFunds
	}
	b.UpdatedAt = now
	b.Seq++
	if err := putRecord(txn, balanceKey(user), &b, 0); err != nil {
		return err
	}
	return putListed(txn, ledgerKey(user, b.Seq), &LedgerEntry{
		Seq: b.Seq, UserID: user, Kind: kind, Amount: amount,
		Available: b.Available, Held: b.Held, At: now, Note: note,
	})
}
