package http

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/connlimit"
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
	// ViewerToken is a read-only admin bearer: every change is refused 403 read_only.
	ViewerToken string
	// ConsoleToken is the daemon's own SSH console's bearer, made fresh each start and
	// never shown: requests bearing it carry the role and person the SSH server has
	// checked (HeaderRole, HeaderActor).
	ConsoleToken string
	MaxBody      int
	Logger       *slog.Logger
	Registry     *prometheus.Registry
	Blog         BlogConfig
	// RateLimit and RateWindow are shown by the rate-limit view; Sending says whether
	// Telegram sending is on (the outbox view).
	RateLimit  int
	RateWindow time.Duration
	Sending    bool
	// MaxConns caps concurrent connections on the public listener (0: no cap); the
	// excess gets a 503 too_many_connections and is closed.
	MaxConns int
	// PrivateOps moves /metrics and the detailed health off the public app onto the
	// one ServeOps runs (--metrics-addr).
	PrivateOps bool
	// WriteTimeout bounds writing one response (0: 30 s); a backup's stream takes it
	// as the longest a client may stall instead.
	WriteTimeout time.Duration
}

// writeTimeout is WriteTimeout or its default.
func (c Config) writeTimeout() time.Duration {
	if c.WriteTimeout > 0 {
		return c.WriteTimeout
	}
	return 30 * time.Second
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
	Reconciler Reconciler // nil leaves /admin/reconcile unregistered
	Backups    Backups    // nil leaves GET /admin/backup unregistered
	Users      UserOrders // nil leaves GET /admin/users/:id/orders unregistered
	Billing    Billing    // nil leaves /admin/orders/:id/renew and /autorenew unregistered
	Payments   Payments   // nil leaves /admin/payments unregistered
	Logs       Logs       // nil leaves GET /admin/logs unregistered
	Broadcasts Broadcasts // nil leaves /admin/broadcast unregistered
	Pause      Pauser     // nil leaves /admin/queue/pause and /resume unregistered
	Audit      Audit      // nil records nothing and leaves GET /admin/audit unregistered
}

// Server is hangar's HTTP front.
type Server struct {
	cfg   Config
	deps  Deps
	app   *fiber.App
	ops   *fiber.App // /metrics and the detailed health, on their own listener
	m     *httpMetrics
	conns *connlimit.Metrics
	// closing is closed when Shutdown starts: long-lived streams (/admin/events) end
	// on it, since Fiber waits for every open request before it returns.
	closing   chan struct{}
	closeOnce sync.Once
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
	s := &Server{cfg: cfg, deps: deps, m: newHTTPMetrics(cfg.Registry), conns: connlimit.NewMetrics(cfg.Registry, "http"),
		closing: make(chan struct{})}
	s.app = newApp(cfg)
	s.app.Use(s.m.middleware)
	s.routes()
	s.ops = newApp(cfg)
	s.ops.Get("/metrics", s.metricsHandler())
	s.ops.Get("/health", s.detailedHealth)
	return s
}

func newApp(cfg Config) *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "hangar",
		BodyLimit:             cfg.MaxBody,
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler(cfg.Logger),
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          cfg.writeTimeout(),
		IdleTimeout:           2 * time.Minute,
	})
	app.Server().Handler = refuseUnknownMethods(app.Server().Handler)
	return app
}

func (s *Server) metricsHandler() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{}))
}

func (s *Server) routes() {
	s.app.Get("/health", s.health)
	if !s.cfg.PrivateOps {
		s.app.Get("/metrics", s.metricsHandler())
	}
	s.app.Post("/webhook", s.webhook)

	if s.deps.Orders != nil {
		bearerSecret := requireBearer(s.cfg.WebhookSecret, errSecretUnset)
		s.app.Post("/orders", bearerSecret, s.createOrder)
		s.app.Post("/provision", bearerSecret, s.provision)
		s.app.Get("/status/:order_id", bearerSecret, s.status)
	}

	admin := s.app.Group("/admin", s.adminGuard()...)
	admin.Get("/health", s.detailedHealth)
	admin.Get("/whoami", s.whoami)
	if s.deps.Pause != nil {
		admin.Post("/queue/pause", s.pauseQueue)
		admin.Post("/queue/resume", s.resumeQueue)
	}
	if s.deps.Audit != nil {
		admin.Get("/audit", s.auditLog)
	}
	admin.Delete("/ratelimit/:user", s.resetRateLimit)
	if s.deps.Orders != nil {
		admin.Get("/queue", s.queueStats)
		admin.Get("/orders", s.listOrders)
		admin.Get("/orders/:id", s.getOrder)
		admin.Post("/orders/:id/cancel", s.cancelOrder)
		admin.Post("/orders/:id/terminate", s.terminateOrder)
		if s.deps.Billing != nil {
			admin.Post("/orders/:id/renew", s.renewOrder)
			admin.Post("/orders/:id/autorenew", s.setAutoRenew)
		}
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
	if s.deps.Backups != nil {
		admin.Get("/backup", s.backup)
	}
	if s.deps.Reconciler != nil {
		admin.Get("/reconcile", s.lastReconcile)
		admin.Post("/reconcile", s.reconcileNow)
	}
	if s.deps.Broadcasts != nil {
		s.broadcastRoutes(admin)
	}
	if s.deps.Users != nil {
		admin.Get("/users/:id/orders", s.userOrders)
	}
	if s.deps.Payments != nil {
		admin.Get("/payments", s.payments)
		admin.Post("/payments/:charge_id/refund", s.refundPayment)
	}
	if s.deps.Logs != nil {
		admin.Get("/logs", s.logs)
	}
	if s.deps.Balances != nil {
		admin.Post("/users/:id/deposit", s.deposit)
		admin.Get("/users/:id", s.balance)
	}

	s.blogRoutes()
}

// App exposes the Fiber app for in-process tests (app.Test).
func (s *Server) App() *fiber.App { return s.app }

// Serve accepts connections on ln until Shutdown. Accept errors (out of descriptors)
// are waited out rather than ending it, and connections over MaxConns are refused.
func (s *Server) Serve(ln net.Listener) error { return s.app.Listener(s.guard(ln)) }

// maxOpsConns caps the private --metrics-addr listener's connections: a few scrapers
// and health checks use it, and uncapped, idle connections there could take the
// descriptors the public listener and the store need.
const maxOpsConns = 32

// ServeOps serves /metrics and the detailed /health on ln (the private --metrics-addr
// listener) until Shutdown.
func (s *Server) ServeOps(ln net.Listener) error {
	return s.ops.Listener(connlimit.Wrap(ln, connlimit.Config{Name: "ops", Max: maxOpsConns, Logger: s.cfg.Logger}))
}

// Shutdown stops accepting, ends the event streams, and waits for the requests in
// flight up to ctx's deadline; keep-alive connections close as their requests end.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closing) })
	errOps := s.ops.ShutdownWithContext(ctx)
	return errors.Join(s.app.ShutdownWithContext(ctx), errOps)
}

// OpenConns is the number of open connections on the public listener.
func (s *Server) OpenConns() int { return int(s.conns.Open()) }

func pathInt64(c *fiber.Ctx, name string) (int64, error) {
	v, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || v <= 0 {
		return 0, badRequest("bad_"+name, name+" must be a positive integer")
	}
	return v, nil
}
