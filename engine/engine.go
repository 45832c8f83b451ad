package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/go-telegram/bot/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/store"
)

// UpdateStore is what the update path needs from the store.
type UpdateStore interface {
	AcceptUpdate(updateID int64, body []byte) (fresh bool, err error)
	PendingUpdates(limit int) ([]store.InboxUpdate, error)
	LoadWindow(userID int64) (store.Window, error)
	CompleteUpdate(o store.UpdateOutcome) error
	ResetWindow(userID int64) (bool, error)
}

// OutboxStore is what the Telegram sender needs from the store.
type OutboxStore interface {
	EnqueueMessages(msgs ...store.OutboxMessage) ([]store.OutboxMessage, error)
	DueMessages(now time.Time, limit int) ([]store.OutboxMessage, error)
	RescheduleMessage(m store.OutboxMessage, nextAt time.Time, lastErr string) error
	FinishMessage(m store.OutboxMessage, status, lastErr string) error
	LogTransientMessage(m store.OutboxMessage, status, lastErr string) error
}

// Store is everything the engine keeps on disk.
type Store interface {
	UpdateStore
	OutboxStore
	Ping(ctx context.Context) error
}

// Config tunes the engine. Zero values take the documented defaults.
type Config struct {
	RateLimit   int           // messages per user per window (default 30)
	RateWindow  time.Duration // window length (default 60s)
	IdleTimeout time.Duration // a user actor with no traffic this long is stopped (default 2 windows)
	Clock       Clock
	Logger      *slog.Logger
	Registry    prometheus.Registerer
	// SendInterval paces outgoing Telegram messages (default 1/30 s: Telegram's global limit).
	SendInterval time.Duration
}

func (c *Config) setDefaults() {
	if c.RateLimit <= 0 {
		c.RateLimit = 30
	}
	if c.RateWindow <= 0 {
		c.RateWindow = time.Minute
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 2 * c.RateWindow
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.SendInterval <= 0 {
		c.SendInterval = time.Second / 30
	}
}

// Engine runs hangar's actors.
type Engine struct {
	cfg     Config
	store   Store
	sender  Sender
	metrics *metrics
	actors  *actor.Engine
	router  *actor.PID
	outbox  *actor.PID
	started atomic.Bool
}

// New builds an engine; Start spawns its actors.
func New(cfg Config, st Store, sender Sender) (*Engine, error) {
	cfg.setDefaults()
	ae, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &Engine{cfg: cfg, store: st, sender: sender, metrics: newMetrics(cfg.Registry), actors: ae}, nil
}

// Start spawns the outbox sender and the update router, which re-delivers every update
// a previous run acknowledged but did not process.
func (e *Engine) Start() error {
	e.outbox = e.actors.Spawn(newOutboxSender(e.outboxDeps()), "outbox", actor.WithID("sender"))
	e.router = e.actors.Spawn(newUpdateRouter(e.routerDeps()), "updates", actor.WithID("router"))
	res, err := e.actors.Request(e.router, recoverInbox{}, time.Minute).Result()
	if err != nil {
		return fmt.Errorf("engine: recover inbox: %w", err)
	}
	if r, ok := res.(recoverInboxResult); ok && r.err != nil {
		return fmt.Errorf("engine: recover inbox: %w", r.err)
	}
	e.started.Store(true)
	return nil
}

// Stop lets the actors finish what is in their mailboxes, then stops them.
func (e *Engine) Stop(ctx context.Context) {
	if !e.started.Swap(false) {
		return
	}
	for _, pid := range []*actor.PID{e.router, e.outbox} {
		select {
		case <-e.actors.Poison(pid).Done():
		case <-ctx.Done():
			return
		}
	}
}

// ErrNotStarted is returned when the engine is asked for work before Start.
var ErrNotStarted = errors.New("engine: not started")

// AcceptUpdate durably records a Telegram update and hands it to the user's actor. It
// returns once the update is on disk: fresh is false for a re-delivered update_id,
// which is acknowledged without being processed again.
func (e *Engine) AcceptUpdate(u *models.Update, raw []byte) (fresh bool, err error) {
	if !e.started.Load() {
		return false, ErrNotStarted
	}
	fresh, err = e.store.AcceptUpdate(u.ID, raw)
	if err != nil {
		return false, err
	}
	if !fresh {
		e.metrics.updatesDuplicate.Inc()
		return false, nil
	}
	e.metrics.updatesAccepted.Inc()
	e.actors.Send(e.router, deliverUpdate{update: u, acceptedAt: e.cfg.Clock.Now()})
	return true, nil
}

// ResetRateLimit clears a user's message window in the store and in its live actor.
func (e *Engine) ResetRateLimit(userID int64) (bool, error) {
	res, err := e.actors.Request(e.router, resetWindow{userID: userID}, 5*time.Second).Result()
	if err != nil {
		return false, err
	}
	r := res.(resetWindowResult)
	return r.existed, r.err
}

// Health is the engine's part of GET /health.
type Health struct {
	Running    bool `json:"running"`
	UserActors int  `json:"user_actors"`
	Inbox      int  `json:"inbox_pending"`
}

// Health asks the router for a snapshot; it fails if the router does not answer.
func (e *Engine) Health(ctx context.Context) (Health, error) {
	if !e.started.Load() {
		return Health{}, ErrNotStarted
	}
	res, err := e.actors.Request(e.router, healthProbe{}, 2*time.Second).Result()
	if err != nil {
		return Health{}, fmt.Errorf("engine: router did not answer: %w", err)
	}
	h := res.(Health)
	h.Running = true
	return h, nil
}

// PokeOutbox asks the sender to look for due messages now.
func (e *Engine) PokeOutbox() { e.actors.Send(e.outbox, pokeOutbox{}) }

func (e *Engine) routerDeps() routerDeps {
	return routerDeps{cfg: e.cfg, store: e.store, metrics: e.metrics, outbox: func() *actor.PID { return e.outbox }}
}

func (e *Engine) outboxDeps() outboxDeps {
	return outboxDeps{cfg: e.cfg, store: e.store, sender: e.sender, metrics: e.metrics}
}

// recoverPanic turns a panic inside an actor handler into a logged, counted error so
// that a poison message can never exhaust Hollywood's restart budget (issue #196).
func recoverPanic(log *slog.Logger, m *metrics, kind string, errp *error) {
	if v := recover(); v != nil {
		m.panics.WithLabelValues(kind).Inc()
		log.Error("actor handler panicked", "actor", kind, "panic", fmt.Sprint(v))
		if errp != nil {
			*errp = fmt.Errorf("panic in %s: %v", kind, v)
		}
	}
}
