package http

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// viewOrder is an order as the admin API shows it (docs/admin-api.md).
func viewOrder(o store.Order) api.Order {
	v := api.Order{
		OrderID: o.ID, UserID: o.UserID, TelegramUserID: strconv.FormatInt(o.TelegramUserID, 10),
		Status: o.Status, WaitingRetry: o.WaitingRetry(), SpecID: o.SpecID, Region: o.Region, Provider: o.Provider,
		PricePaid: o.PricePaid, Money: o.Money, Attempts: o.Attempts,
		IPAddress: nullable(o.IPAddress), InstanceID: nullable(o.InstanceID), ErrorMessage: nullable(o.LastError),
		DeadLettered: o.DeadLettered, CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(),
		History: make([]api.HistoryEntry, 0, len(o.History)),
	}
	for _, e := range o.History {
		v.History = append(v.History, api.HistoryEntry{At: e.At, Event: e.Event, Status: e.Status, Attempt: e.Attempt, Error: e.Error})
	}
	if o.WaitingRetry() {
		t := o.DueAt.UTC()
		v.NextRetryAt = &t
	}
	viewBilling(&v, o)
	return v
}

func viewOrders(os []store.Order) []api.Order {
	out := make([]api.Order, 0, len(os))
	for _, o := range os {
		out = append(out, viewOrder(o))
	}
	return out
}

// queryLimit reads ?limit= within [1, max], defaulting to def.
func queryLimit(c *fiber.Ctx, def, max int) (int, error) {
	raw := c.Query("limit")
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > max {
		return 0, badRequest("bad_limit", "limit must be a whole number from 1 to "+strconv.Itoa(max))
	}
	return n, nil
}

// Pauser pauses and resumes starting provisioning attempts (engine.Engine).
type Pauser interface {
	PauseQueue(by string) (store.QueuePause, bool, error)
	ResumeQueue(by string) (store.QueuePause, bool, error)
}

// pauseQueue is POST /admin/queue/pause: for a provider outage, orders are still
// accepted but no attempt starts (and no retry is spent) until resumed.
func (s *Server) pauseQueue(c *fiber.Ctx) error {
	return s.setPause(c, s.deps.Pause.PauseQueue)
}

func (s *Server) resumeQueue(c *fiber.Ctx) error {
	return s.setPause(c, s.deps.Pause.ResumeQueue)
}

func (s *Server) setPause(c *fiber.Ctx, do func(by string) (store.QueuePause, bool, error)) error {
	st, changed, err := do(principalOf(c).Actor)
	if err != nil {
		return err
	}
	return c.JSON(api.QueuePause{Paused: st.Paused, Since: st.Since.UTC(), Changed: changed})
}

func (s *Server) queueStats(c *fiber.Ctx) error {
	st, err := s.deps.Orders.QueueStats()
	if err != nil {
		return err
	}
	return c.JSON(st)
}

func validStatus(status string) bool {
	for _, s := range store.OrderStatuses {
		if s == status {
			return true
		}
	}
	return false
}

func (s *Server) listOrders(c *fiber.Ctx) error {
	status := c.Query("status")
	if status != "" && !validStatus(status) {
		return badRequest("bad_status", "status must be one of pending, provisioning, active, failed, cancelled, terminated")
	}
	limit, err := queryLimit(c, 50, 500)
	if err != nil {
		return err
	}
	var before int64
	if raw := c.Query("before"); raw != "" {
		if before, err = strconv.ParseInt(raw, 10, 64); err != nil || before < 1 {
			return badRequest("bad_before", "before must be a positive order id")
		}
	}
	orders, err := s.deps.Orders.ListOrders(status, limit, before)
	if err != nil {
		return err
	}
	var next int64
	if len(orders) == limit {
		next = orders[len(orders)-1].ID
	}
	return c.JSON(api.OrderPage{Orders: viewOrders(orders), NextBefore: next})
}

func (s *Server) getOrder(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	o, err := s.deps.Orders.GetOrder(id)
	if err != nil {
		return err
	}
	return c.JSON(viewOrder(o))
}

func (s *Server) cancelOrder(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	o, err := s.deps.Orders.CancelOrder(id)
	if err != nil {
		return err
	}
	return c.JSON(viewOrder(o))
}

func (s *Server) listDeadLetters(c *fiber.Ctx) error {
	limit, err := queryLimit(c, 100, 1000)
	if err != nil {
		return err
	}
	orders, err := s.deps.Orders.DeadLetters(limit)
	if err != nil {
		return err
	}
	return c.JSON(api.DeadLetters{DeadLetters: viewOrders(orders)})
}

func (s *Server) requeueDeadLetter(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	o, err := s.deps.Orders.RequeueDeadLetter(id)
	if err != nil {
		return err
	}
	return c.JSON(viewOrder(o))
}

func (s *Server) requeueAllDeadLetters(c *fiber.Ctx) error {
	n, err := s.deps.Orders.RequeueAllDeadLetters()
	if err != nil {
		return err
	}
	return c.JSON(api.RequeueAllResult{Requeued: n})
}

func (s *Server) purgeDeadLetters(c *fiber.Ctx) error {
	n, err := s.deps.Orders.PurgeDeadLetters()
	if err != nil {
		return err
	}
	return c.JSON(api.PurgeResult{Purged: n})
}

func (s *Server) terminateOrder(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	o, err := s.deps.Orders.TerminateOrder(id)
	if err != nil {
		return err
	}
	return c.JSON(viewOrder(o))
}

// plans lists the catalogue (GET /admin/plans).
func (s *Server) plans(c *fiber.Ctx) error {
	cat := s.deps.Orders.Plans()
	return c.JSON(fiber.Map{"currency": cat.Currency, "plans": cat.Plans})
}
