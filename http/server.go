package http

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hangarhq/hangar/engine"
)

// Updates is what the webhook needs from the engine.
type Updates interface {
	AcceptUpdate(h engine.UpdateHeader, raw []byte) (fresh bool, err error)
}

// RateLimits is what the admin API needs to reset a user's window.
type RateLimits interface {
	ResetRateLimit(userID int64) (existed bool, err error)
}

// HealthChecker reports the engine's state.
type HealthChecker interface {
	Health(ctx context.Context) (engine.Health, error)
}

// Pinger reports the store's state.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config holds the HTTP settings.
type Config struct {
	WebhookSecret string
	AdminToken    string
	MaxBody       int
	Logger        *slog.Logger
	Registry      *prometheus.Registry
	Blog          BlogConfig
	// RateLimit and RateWindow are shown by the rate-limit view; Sending says whether
	// Telegram sending is on (the outbox view).
	RateLimit  int
	RateWindow time.Duration
	Sending    bool
}

// Deps are the parts the handlers call.
type Deps struct {
	Updates    Updates
	RateLimits RateLimits
	Health     HealthChecker
	Store      Pinger
	Blog       Blog // nil leaves the blog API (/api/*) unregistered
	Orders     Orders
	Balances   Balances
	Inspector  Inspector
}

// Server is hangar's HTTP front.
type Server struct {
	cfg  Config
	deps Deps
	app  *fiber.App
	m    *httpMetrics
}

// New builds the Fiber app with every route.
func New(cfg Config, deps Deps) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{cfg: cfg, deps: deps, m: newHTTPMetrics(cfg.Registry)}
	s.app = fiber.New(fiber.Config{
		AppName:               "hangar",
		BodyLimit:             cfg.MaxBody,
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler(cfg.Logger),
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           2 * time.Minute,
	})
	s.app.Use(s.m.middleware)
	s.routes()
	return s
}

func (s *Server) routes() {
	s.app.Get("/health", s.health)
	s.app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})))
	s.app.Post("/webhook", s.webhook)

	if s.deps.Orders != nil {
		bearerSecret := requireBearer(s.cfg.WebhookSecret, errSecretUnset)
		s.app.Post("/orders", bearerSecret, s.createOrder)
		s.app.Post("/provision", bearerSecret, s.provision)
		s.app.Get("/status/:order_id", bearerSecret, s.status)
	}

	admin := s.app.Group("/admin", requireBearer(s.cfg.AdminToken, errAdminUnset))
	admin.Delete("/ratelimit/:user", s.resetRateLimit)
	if s.deps.Orders != nil {
		admin.Get("/queue", s.queueStats)
		admin.Get("/orders", s.listOrders)
		admin.Get("/orders/:id", s.getOrder)
		admin.Post("/orders/:id/cancel", s.cancelOrder)
		admin.Post("/orders/:id/terminate", s.terminateOrder)
		admin.Get("/plans", s.plans)
		admin.Get("/dlq", s.listDeadLetters)
		admin.Post("/dlq/requeue", s.requeueAllDeadLetters)
		admin.Post("/dlq/:id/requeue", s.requeueDeadLetter)
		admin.Delete("/dlq", s.purgeDeadLetters)
		admin.Get("/events", s.events)
	}
	if s.deps.Inspector != nil {
		admin.Get("/ratelimits", s.rateLimits)
		admin.Get("/outbox", s.outbox)
	}
	if s.deps.Balances != nil {
		admin.Post("/users/:id/deposit", s.deposit)
		admin.Get("/users/:id", s.balance)
	}

	s.blogRoutes()
}

// App exposes the Fiber app for in-process tests (app.Test).
func (s *Server) App() *fiber.App { return s.app }

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error { return s.app.Listener(ln) }

// Shutdown stops accepting and waits for in-flight requests up to ctx's deadline.
func (s *Server) Shutdown(ctx context.Context) error { return s.app.ShutdownWithContext(ctx) }

func pathInt64(c *fiber.Ctx, name string) (int64, error) {
	v, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || v <= 0 {
		return 0, badRequest("bad_"+name, name+" must be a positive integer")
	}
	return v, nil
}
