package http

import "github.com/gofiber/fiber/v2"

// resetRateLimit clears one user's message window (DELETE /admin/ratelimit/:user).
func (s *Server) resetRateLimit(c *fiber.Ctx) error {
	user, err := pathInt64(c, "user")
	if err != nil {
		return err
	}
	existed, err := s.deps.RateLimits.ResetRateLimit(user)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"user_id": user, "reset": existed})
}
