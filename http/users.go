package http

import (
	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// UserOrders is what the console's user view reads beside the balance: one user's
// orders, newest first, from the store's per-user index.
type UserOrders interface {
	UserOrders(user int64, limit int) ([]store.Order, error)
}

var _ UserOrders = (*store.Store)(nil)

// userOrders lists one user's orders newest first (GET /admin/users/:id/orders?limit=).
func (s *Server) userOrders(c *fiber.Ctx) error {
	user, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	limit, err := queryLimit(c, 50, 500)
	if err != nil {
		return err
	}
	orders, err := s.deps.Users.UserOrders(user, limit)
	if err != nil {
		return err
	}
	return c.JSON(api.OrderPage{Orders: viewOrders(orders)})
}
