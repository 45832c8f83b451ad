package http

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// Billing is what the admin billing routes need from the engine (issue 17).
type Billing interface {
	RenewOrder(id int64) (store.Order, error)
	SetAutoRenew(id int64, on bool) (store.Order, error)
}

func nullableTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// viewBilling adds an order's paid time to its admin view.
func viewBilling(v *api.Order, o store.Order) {
	v.PaidUntil, v.Period, v.AutoRenew = nullableTime(o.PaidUntil), o.Period, !o.AutoRenewOff
	v.GraceUntil, v.Operation, v.PoweredOff = nullableTime(o.GraceUntil), o.Op, o.PoweredOff
}

// renewOrder is POST /admin/orders/:id/renew: the next period is paid from the
// user's balance now (402 when it cannot; 409 for an order with no server to pay for).
func (s *Server) renewOrder(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	o, err := s.deps.Billing.RenewOrder(id)
	if err != nil {
		return err
	}
	return c.JSON(viewOrder(o))
}

// autoRenewBody is POST /admin/orders/:id/autorenew's body.
type autoRenewBody struct {
	On *bool `json:"on"`
}

// setAutoRenew is POST /admin/orders/:id/autorenew {"on": false}: off, the server
// ends with its paid period.
func (s *Server) setAutoRenew(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	var body autoRenewBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if body.On == nil {
		return badRequest("missing_fields", `"on" (true or false) is required`)
	}
	o, err := s.deps.Billing.SetAutoRenew(id, *body.On)
	if err != nil {
		return err
	}
	return c.JSON(viewOrder(o))
}
