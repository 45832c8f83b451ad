package http

import (
	"context"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/store"
)

// Payments is what the admin API needs for Telegram Stars payments.
type Payments interface {
	Payments(limit int) ([]store.Payment, error)
	RefundPayment(ctx context.Context, chargeID string) (store.Payment, error)
}

type paymentPage struct {
	Payments []store.Payment `json:"payments"`
}

// payments lists Stars payments newest first (GET /admin/payments?limit=).
func (s *Server) payments(c *fiber.Ctx) error {
	limit, err := queryLimit(c, 100, 1000)
	if err != nil {
		return err
	}
	list, err := s.deps.Payments.Payments(limit)
	if err != nil {
		return err
	}
	return c.JSON(paymentPage{Payments: list})
}

// refundPayment gives a payment's Stars back and moves the ledger back once
// (POST /admin/payments/:charge_id/refund).
func (s *Server) refundPayment(c *fiber.Ctx) error {
	charge := strings.TrimSpace(c.Params("charge_id"))
	if charge == "" || len(charge) > 256 {
		return badRequest("bad_charge_id", "charge_id must be a telegram_payment_charge_id")
	}
	p, err := s.deps.Payments.RefundPayment(c.UserContext(), charge)
	if errors.Is(err, store.ErrNotFound) {
		return newError(fiber.StatusNotFound, "not_found", "no such payment")
	}
	if err != nil {
		return err
	}
	return c.JSON(p)
}
