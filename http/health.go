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

// publicHealth is all an unauthenticated caller learns: up or not. Error texts carry
// paths of the data directory and the engine's inner state, which are the operator's.
type publicHealth struct {
	Status string `json:"status"`
}

// health answers GET /health on the public listener: 200 {"status":"ok"} or 503
// {"status":"unavailable"}, for load balancers and orchestrators.
func (s *Server) health(c *fiber.Ctx) error {
	if res := s.check(c.UserContext()); res.Status != "ok" {
		return c.Status(fiber.StatusServiceUnavailable).JSON(publicHealth{Status: "unavailable"})
	}
	return c.JSON(publicHealth{Status: "ok"})
}

// detailedHealth reports the store and the engine with their errors; it is served
// behind the admin bearer (GET /admin/health) and on the private --metrics-addr
// listener (GET /health). Any failure turns the answer into a 503.
func (s *Server) detailedHealth(c *fiber.Ctx) error {
	res := s.check(c.UserContext())
	if res.Status != "ok" {
		return c.Status(fiber.StatusServiceUnavailable).JSON(res)
	}
	return c.JSON(res)
}

func (s *Server) check(ctx context.Context) healthResponse {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
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
	return res
}
