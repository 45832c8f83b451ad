package http

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/engine"
)

type healthResponse struct {
	Status string         `json:"status"`
	Store  string         `json:"store"`
	Engine *engine.Health `json:"engine,omitempty"`
	Errors []string       `json:"errors,omitempty"`
}

// health reports the store and the engine; any failure turns the answer into a 503.
func (s *Server) health(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 3*time.Second)
	defer cancel()
	res := healthResponse{Status: "ok", Store: "ok"}
	if err := s.deps.Store.Ping(ctx); err != nil {
		res.Status, res.Store = "degraded", "error"
		res.Errors = append(res.Errors, "store: "+err.Error())
	}
	h, err := s.deps.Health.Health(ctx)
	if err != nil {
		res.Status = "degraded"
		res.Errors = append(res.Errors, "engine: "+err.Error())
	} else {
		res.Engine = &h
	}
	if res.Status != "ok" {
		return c.Status(fiber.StatusServiceUnavailable).JSON(res)
	}
	return c.JSON(res)
}
