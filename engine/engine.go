package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/i18n"
	"github.com/hangarhq/hangar/store"
)

// UpdateStore is what the update path needs from the store.
type UpdateStore interface {
	AcceptUpdate(updateID int64, body []byte) (fresh bool, err error)
	PendingUpdates(limit int) ([]store.InboxUpdate, error)
	LoadWindow(userID int64) (store.Window, error)
	CompleteUpdate(o store.UpdateOutcome) ([]store.OutboxMessage, error)
	UpdateSeen(updateID int64) (bool, error)
	ProcessUpdate(o store.UpdateOutcome) ([]store.OutboxMessage, error)
	ResetWindow(userID int64) (bool, error)
}

// OutboxStore is what the Telegram sender needs from the store.
type OutboxStore interface {
	QueuedMessages(limit int) ([]store.OutboxMessage, error)
	RescheduleMessage(m store.OutboxMessage, nextAt time.Time, lastErr string) error
	DeferMessage(m store.OutboxMessage, nextAt time.Time, lastErr string) error
	FinishMessages(done []store.Finished) error
	LogTransientMessage(m store.OutboxMessage, status, lastErr string) error
}

// Store is everything the engine keeps on disk.
type Store interface {
	UpdateStore
	OutboxStore
	OrderStore
	BotStore
	PaymentStore
	BroadcastStore
	PauseStore
	Ping(ctx context.Context) error
}

// Config tunes the engine. Zero values take the documented defaults.
type Config struct {
	RateLimit   int           // messages per user per window (default 30)
	RateWindow  time.Duration // window length (default 60s)
	IdleTimeout time.Duration // a user actor with no traffic this long is stopped (default 2 windows)
	MaxPending  int           // updates waiting for their actors before the webhook answers 503 (default 50,000)
	// UpdateWait bounds how long the webhook waits for its update to be processed
	// (default 10 s); past it the answer is 503 and Telegram delivers the update again.
	UpdateWait time.Duration
	Clock      Clock
	Logger     *slog.Logger
	Registry   prometheus.Registerer
	// SendInterval paces outgoing Telegram messages (default 1/30 s: Telegram's global limit).
	SendInterval time.Duration
	Queue        QueueConfig
	// Providers by name ("sim", "linode", "vultr"); plans naming another are refused.
	Providers map[string]Provider
	Catalog   *catalog.Catalog
	// Password derives an order's root password (the same every time for one order, so
	// a resumed order and the outbox can recompute it and nothing stores it).
	Password    func(orderID int64) string
	AdminChatID int64
	Secrets     SecretsConfig
	Reconcile   ReconcileConfig
	// Passwords, when set, replaces Password: random passwords kept sealed only until
	// sent (a Vault).
	Passwords PasswordSource
	Broadcast BroadcastConfig
	Billing   BillingConfig
	// StarsRate is minor units of the catalogue currency per Telegram Star; 0 turns
	// /topup off. Language is the bot's language for users whose client asks for one
	// it does not speak (default ko).
	StarsRate int64
	Language  string
}

// QueueConfig tunes provisioning (seed 002's consumer settings). Zero values take the
// defaults; MaxRetries < 0 means no retries.
type QueueConfig struct {
	MaxConcurrency   int           // orders provisioned at once (default 5)
	MaxRetries       int           // retries before the dead letter queue (default 3)
	Retry            RetryPolicy   // default 2 s, ×2
	Alarms           Alarms        // default depth 500, dead letters 10, lag 10 min
	ProvisionTimeout time.Duration // one attempt's limit, including waiting for an IP (default 10 min)
	PollInterval     time.Duration // how often to ask for a new server's IP (default 3 s)
	Tick             time.Duration // how often due retries are looked for (default 100 ms)
	OrderLimit       store.OrderLimit
}

func (q *QueueConfig) setDefaults() {
	if q.MaxConcurrency <= 0 {
		q.MaxConcurrency = 5
	}
	switch {
	case q.MaxRetries == 0:
		q.MaxRetries = 3
	case q.MaxRetries < 0:
		q.MaxRetries = 0
	}
	q.Retry.setDefaults()
	q.Alarms.setDefaults()
	if q.ProvisionTimeout <= 0 {
		q.ProvisionTimeout = 10 * time.Minute
	}
	if q.PollInterval <= 0 {
		q.PollInterval = 3 * time.Second
	}
	if q.Tick <= 0 {
		q.Tick = 100 * time.Millisecond
	}
	if q.OrderLimit.Max == 0 {
		q.OrderLimit = store.OrderLimit{Max: 10, Window: time.Hour}
	}
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
	if c.MaxPending <= 0 {
		c.MaxPending = 50000
	}
	if c.UpdateWait <= 0 {
		c.UpdateWait = 10 * time.Second
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
	c.Queue.setDefaults()
	c.Billing.setDefaults()
	if c.Catalog == nil {
		c.Catalog = catalog.Default()
	}
	if c.Password == nil {
		c.Password = NewPasswordDeriver(nil)
	}
}

// Engine runs hangar's actors.
type Engine struct {
	cfg    Config
	store  Store
	sender Sender
	// namer is the sender as given, before the broadcaster's meter wraps it: the one
	// that can ask getMe.
	namer      botNamer
	metrics    *metrics
	queue      *queueMetrics
	actors     *actor.Engine
	router     *actor.PID
	outbox     *actor.PID
	feed       *feedRef
	dispatcher *actor.PID
	started    atomic.Bool
	stopped    atomic.Bool // Stop has begun
	ctx        context.Context
	cancel     context.CancelFunc
	subs       atomic.Uint64
	// pending counts updates handed to the actors and not yet processed (the user
	// actors decrement it); it bounds what a flood can queue in memory.
	pending atomic.Int64
	// users is the router's directory of live user actors, which the webhook sends to.
	users *userDirectory
	// halted is closed once Stop is done with the actors: a webhook handler still
	// waiting then will never hear from its actor.
	halted chan struct{}
	bcast  *broadcastHandle
	// pause mirrors the dispatcher's pause for readers outside it (the bot).
	pause pauseFlag
	// webhook is Telegram's last word on the webhook (SetWebhookState).
	webhook webhookCell
	// bot answers chat commands for every user actor; the webhook's pre-checkout
	// answers and refunds use its catalogue and store too.
	bot *bot
	// payments is the sender's Stars half, nil when sending is off. Held apart from
	// sender, which the broadcaster wraps in its meter.
	payments paymentSender
}

// New builds an engine; Start spawns its actors.
func New(cfg Config, st Store, sender Sender) (*Engine, error) {
	cfg.setDefaults()
	if cfg.Providers != nil {
		// A plan whose provider is off could only be dead-lettered: it is neither
		// offered nor accepted (issue 15).
		cfg.Catalog = cfg.Catalog.Orderable(func(p string) bool { return cfg.Providers[p] != nil })
	}
	ae, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	lang, err := i18n.New(cfg.Language, cfg.Catalog.Currency)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	namer, _ := sender.(botNamer)
	e := &Engine{cfg: cfg, store: st, sender: sender, namer: namer, metrics: newMetrics(cfg.Registry),
		queue: newQueueMetrics(cfg.Registry), actors: ae, ctx: ctx, cancel: cancel,
		users: newUserDirectory(), halted: make(chan struct{})}
	e.bot = &bot{store: st, catalog: cfg.Catalog, limit: cfg.Queue.OrderLimit, clock: cfg.Clock,
		passwords: e.passwordPolicy(), pause: &e.pause, billing: cfg.Billing,
		lang: lang, pay: st, starsRate: cfg.StarsRate, payMetrics: newPaymentMetrics(cfg.Registry)}
	if ps, ok := sender.(paymentSender); ok && sender.Enabled() {
		e.payments = ps
	}
	return e, nil
}

// Start spawns the outbox sender and the update router, which re-delivers every update
// a previous run acknowledged but did not process.
func (e *Engine) Start() error {
	e.feed = &feedRef{pid: e.actors.Spawn(newFeedHub(), "feed", actor.WithID("hub"))}
	e.startBroadcaster() // before the outbox: it meters the sender the outbox is given
	e.outbox = e.actors.Spawn(newOutboxSender(e.outboxDeps()), "outbox", actor.WithID("sender"))
	e.dispatcher = e.actors.Spawn(newDispatcher(e.dispatcherDeps()), "queue", actor.WithID("dispatcher"))
	res, err := e.actors.Request(e.dispatcher, recoverOrders{}, 5*time.Minute).Result()
	if err != nil {
		return fmt.Errorf("engine: recover orders: %w", err)
	}
	if r := res.(recoverOrdersResult); r.err != nil {
		return fmt.Errorf("engine: recover orders: %w", r.err)
	} else if r.pending+r.resumed > 0 {
		e.cfg.Logger.Info("queue recovered", "pending", r.pending, "resumed_provisioning", r.resumed)
	}
	e.learnBotName()
	e.router = e.actors.Spawn(newUpdateRouter(e.routerDeps()), "updates", actor.WithID("router"))
	res, err = e.actors.Request(e.router, recoverInbox{}, time.Minute).Result()
	if err != nil {
		return fmt.Errorf("engine: recover inbox: %w", err)
	}
	if r, ok := res.(recoverInboxResult); ok && r.err != nil {
		return fmt.Errorf("engine: recover inbox: %w", r.err)
	}
	e.startReconciler()
	e.startBilling()
	e.started.Store(true)
	return nil
}

// botNamer is a sender that can say the bot's own username (getMe).
type botNamer interface {
	Username(ctx context.Context) (string, error)
}

// learnBotName asks Telegram for the bot's username in the background: Start does
// not wait for it (with Telegram's API silent, the webhook and /health stayed closed
// for the wait). Until it answers, every command is taken as the bot's own; it keeps
// asking every 30 s until it does.
func (e *Engine) learnBotName() {
	n := e.namer
	if n == nil || !e.sender.Enabled() {
		return
	}
	go func() {
		for wait := time.Duration(0); ; wait = 30 * time.Second {
			select {
			case <-e.ctx.Done():
				return
			case <-time.After(wait):
			}
			ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
			name, err := n.Username(ctx)
			cancel()
			if err == nil && name != "" {
				e.bot.username.Store(&name)
				return
			}
			if wait == 0 {
				e.cfg.Logger.Warn("telegram getMe did not answer; commands addressed @another_bot are answered until it does", "err", err)
			}
		}
	}()
}

// BotName is the bot's @username once Telegram's getMe answered, "" until then.
func (e *Engine) BotName() string {
	if n := e.bot.username.Load(); n != nil {
		return *n
	}
	return ""
}

// StopStarting is a shutdown's first step, taken as soon as the signal arrives: no
// order attempt starts from now on, and the provider calls in flight are cancelled so
// that their actors record them as interrupted (those orders stay provisioning and
// are resumed, first, at the next start). Requests are still answered and orders still
// accepted and stored meanwhile; Stop finishes the job.
func (e *Engine) StopStarting() {
	if e.ctx.Err() == nil {
		e.cancel()
		e.cfg.Logger.Info("engine stopping: no new order attempts start")
	}
}

// Stop lets the actors finish what is in their mailboxes, then stops them, within
// ctx's deadline, saying what it waits for.
func (e *Engine) Stop(ctx context.Context) {
	if !e.started.Load() || e.stopped.Swap(true) {
		return
	}
	defer close(e.halted)
	// In-flight provider calls end now; their orders stay provisioning and are resumed
	// (found by label) at the next start. Give their actors a moment to say so before
	// the store closes under them.
	e.StopStarting()
	settle := 5 * time.Second
	if deadline, ok := ctx.Deadline(); ok {
		settle = min(settle, time.Until(deadline))
	}
	if st, err := e.QueueStats(); err == nil && st.InFlight > 0 {
		e.cfg.Logger.Info("waiting for in-flight provider calls to record their state", "in_flight", st.InFlight, "up_to", settle.Round(time.Millisecond))
	}
	e.started.Store(false)
	if settle > 0 {
		// Answered once the last attempt has reported, or not at all within settle.
		if _, err := e.actors.Request(e.dispatcher, awaitIdle{}, settle).Result(); err != nil {
			e.cfg.Logger.Warn("provider calls still running at the shutdown deadline; their orders are resumed at the next start")
		}
	}
	// The reconciler and billing go first: they hand work to the dispatcher and the
	// outbox. Every actor Start spawned is stopped, so that none of their tickers
	// outlives the engine and messages an actor over a closed store.
	for _, a := range []struct {
		name string
		pid  *actor.PID
	}{
		{"reconciler", e.reconcilerPID()},
		{"billing", e.billingPID()},
		{"update router", e.router}, {"dispatcher", e.dispatcher}, {"broadcaster", e.bcast.pid},
		{"outbox sender", e.outbox}, {"event feed", e.feed.pid},
	} {
		if a.pid == nil {
			continue // not started: the store cannot reconcile or bill
		}
		e.cfg.Logger.Debug("waiting for actor to finish its mailbox", "actor", a.name)
		select {
		case <-e.actors.Poison(a.pid).Done():
		case <-ctx.Done():
			e.cfg.Logger.Warn("shutdown deadline reached before an actor finished its mailbox", "actor", a.name)
			return
		}
	}
}

// ErrNotStarted is returned when the engine is asked for work before Start.
var ErrNotStarted = errors.New("engine: not started")

// AcceptUpdate is the webhook's door: the user's actor processes the update now, and
// AcceptUpdate returns once the outcome (the window, the replies, and the update_id's
// 24 h seen-marker) is durable, in one commit. fresh is false for an update_id
// processed before, acknowledged without running the bot again. An error means
// nothing of the update is durable (a store failure, ErrUpdatePanicked,
// ErrUpdateTimeout, ErrBusy, ErrNotStarted): Telegram must deliver it again.
func (e *Engine) AcceptUpdate(h UpdateHeader, raw []byte) (fresh bool, err error) {
	if err := e.admit(h, raw); err != nil {
		return false, err
	}
	body := h.body
	if body == nil { // the caller may reuse raw once answered; the actor may still need it
		body = append([]byte(nil), raw...)
	}
	w := waiters.Get().(*updateWaiter)
	e.deliver(h.UserID, &userUpdate{id: h.ID, update: h.update, raw: body,
		acceptedAt: e.cfg.Clock.Now(), reply: w.reply})
	w.timer.Reset(e.cfg.UpdateWait)
	select {
	case r := <-w.reply:
		w.done()
		return r.fresh, r.err
	case <-w.timer.C:
		// The actor may still process it, and answer on w.reply, which is therefore
		// not used again; Telegram's re-delivery then finds the update done.
		e.metrics.updatesRefused.Inc()
		return false, ErrUpdateTimeout
	case <-e.halted:
		w.timer.Stop()
		select {
		case r := <-w.reply:
			w.done()
			return r.fresh, r.err
		default:
			return false, ErrNotStarted
		}
	}
}

// updateWaiter is what a webhook request waits on: its actor's answer, or its time
// running out. Waiters are pooled (a channel and a timer per update were two of the
// webhook's allocations); one goes back only once its answer has been received, so a
// pooled channel never holds a stale one.
type updateWaiter struct {
	reply chan updateResult
	timer *time.Timer
}

var waiters = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &updateWaiter{reply: make(chan updateResult, 1), timer: t}
}}

// done returns w to the pool after its answer was received.
func (w *updateWaiter) done() {
	// Since Go 1.23 a stopped timer's channel holds no stale tick for the next Reset.
	w.timer.Stop()
	waiters.Put(w)
}

// QueueUpdate is the poller's door: it durably records the update in the inbox and
// hands it to the user's actor, returning once the update is on disk (not yet
// processed). fresh is false for an update_id seen before, which is not queued again.
func (e *Engine) QueueUpdate(h UpdateHeader, raw []byte) (fresh bool, err error) {
	if err := e.admit(h, raw); err != nil {
		return false, err
	}
	fresh, err = e.store.AcceptUpdate(h.ID, raw)
	if err != nil {
		return false, err
	}
	if !fresh {
		e.metrics.updatesDuplicate.Inc()
		return false, nil
	}
	e.metrics.updatesAccepted.Inc()
	e.deliver(h.UserID, &userUpdate{id: h.ID, update: h.update, raw: append([]byte(nil), raw...), acceptedAt: e.cfg.Clock.Now()})
	return true, nil
}

// admit answers a pre-checkout query, then applies back-pressure.
func (e *Engine) admit(h UpdateHeader, raw []byte) error {
	if !e.started.Load() {
		return ErrNotStarted
	}
	if h.PreCheckout {
		// Before the back-pressure check: answering costs one store read and one call,
		// and Telegram cancels the payment unless it hears within 10 s.
		e.answerPreCheckout(decodedUpdate(h, raw).PreCheckoutQuery)
	}
	if e.pending.Load() >= int64(e.cfg.MaxPending) {
		e.metrics.updatesRefused.Inc()
		return ErrBusy
	}
	return nil
}

// deliver counts an update as pending and sends it to its user's actor: directly
// when the actor is live, through the router (which spawns it) when not.
func (e *Engine) deliver(userID int64, u *userUpdate) {
	e.pending.Add(1)
	if pid, ok := e.users.acquire(userID, u.acceptedAt); ok {
		e.actors.Send(pid, u)
		return
	}
	e.actors.Send(e.router, deliverUpdate{userID: userID, update: u})
}

// ErrUpdateTimeout is the webhook's answer for an update its actor did not finish
// within Config.UpdateWait: Telegram delivers it again.
var ErrUpdateTimeout = errors.New("engine: the update was not processed in time")

// ErrBusy is returned while more updates wait for their actors than MaxPending: the
// webhook answers 503 and Telegram delivers the update again later, so a flood cannot
// pile up in memory.
var ErrBusy = errors.New("engine: too many updates waiting to be processed")

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
	Inbox      int  `json:"inbox_pending"` // updates handed to their actors and not yet processed
	// Telegram is getWebhookInfo's last answer (nil: not asked, e.g. polling or no token).
	Telegram *WebhookState `json:"telegram,omitempty"`
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
	h.Inbox = int(e.pending.Load())
	h.Telegram = e.webhook.load()
	return h, nil
}

func (e *Engine) routerDeps() routerDeps {
	// The outbox and the dispatcher run by now (Start).
	return routerDeps{users: e.users, userShared: &userShared{cfg: e.cfg, store: e.store, metrics: e.metrics,
		outbox: e.outbox, dispatcher: e.dispatcher, feed: e.feed, sendingOff: !e.sender.Enabled(),
		pending: &e.pending, bot: e.bot}}
}

func (e *Engine) outboxDeps() outboxDeps {
	return outboxDeps{payments: e.payments, stop: e.ctx, orders: e.store, scrub: newScrubber(e.cfg.Secrets.Mask...), notes: e.notes(), cfg: e.cfg, store: e.store, sender: e.sender, metrics: e.metrics, password: e.passwords(),
		engine: e.actors, feed: e.feed}
}

func (e *Engine) dispatcherDeps() dispatcherDeps {
	return dispatcherDeps{cfg: e.cfg, store: e.store, pauses: e.store, pause: &e.pause, webhook: &e.webhook, metrics: e.queue, feed: e.feed, orders: orderDeps{
		ctx: e.ctx, cfg: e.cfg, store: e.store, providers: e.cfg.Providers, catalog: e.cfg.Catalog,
		metrics: e.metrics, queue: e.queue, feed: e.feed, outbox: func() *actor.PID { return e.outbox },
		notes: e.notes(), password: e.passwords(),
		billing: e.billingPID,
	}}
}

// recoverPanic turns a panic inside an actor handler into a logged, counted error so
// that a poison message can never exhaust Hollywood's restart budget (issue #196).
// guardAttempt is deferred by the actors that run one attempt and stop (an order's,
// a provider operation's). They are spawned WithMaxRestarts(0), and Hollywood v1.0.5
// cannot stop such an actor after a panic: its cleanup calls a nil cancel function,
// and that second panic takes the whole process down. So a panic is recovered here,
// counted and logged, reported by onPanic (which must not panic), and the actor stops.
func (d *orderDeps) guardAttempt(c *actor.Context, kind string, onPanic func()) {
	v := recover()
	if v == nil {
		return
	}
	d.metrics.panics.WithLabelValues(kind).Inc()
	d.cfg.Logger.Error("actor handler panicked; its attempt is retried", "actor", kind, "panic", fmt.Sprint(v))
	onPanic()
	c.Engine().Poison(c.PID())
}

func recoverPanic(log *slog.Logger, m *metrics, kind string, errp *error) {
	if v := recover(); v != nil {
		m.panics.WithLabelValues(kind).Inc()
		log.Error("actor handler panicked", "actor", kind, "panic", fmt.Sprint(v))
		if errp != nil {
			*errp = fmt.Errorf("panic in %s: %v", kind, v)
		}
	}
}
