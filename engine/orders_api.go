package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/store"
)

// OrderRequest is what a client asks for (POST /orders, or the bot's confirm button).
type OrderRequest struct {
	UserID         int64
	TelegramUserID int64
	ChatID         int64 // where to send notices; defaults to TelegramUserID (a private chat)
	SpecID         string
	Region         string
	// IdempotencyKey, when set, makes a retried request (the client timed out and sent
	// it again) answer the order the first one made, holding nothing twice.
	IdempotencyKey string
}

// Order errors the HTTP layer maps to statuses.
var (
	// ErrIdempotencyConflict is an idempotency key used again for another request.
	ErrIdempotencyConflict = errors.New("engine: this idempotency key was used for another order")
	ErrUnknownPlan         = catalog.ErrUnknownPlan
	ErrUnknownRegion       = catalog.ErrUnknownRegion
	// ErrPlanUnavailable is a plan whose provider is not configured on this server.
	ErrPlanUnavailable = catalog.ErrPlanUnavailable
)

const requestTimeout = 30 * time.Second

// CreateOrder validates the plan, stores the order with its price held from the
// user's balance, and puts it on the queue. The order is durable when this returns.
func (e *Engine) CreateOrder(req OrderRequest) (store.Order, error) {
	if !e.started.Load() {
		return store.Order{}, ErrNotStarted
	}
	plan, err := e.cfg.Catalog.Lookup(req.SpecID, req.Region)
	if err != nil {
		return store.Order{}, err
	}
	if req.ChatID == 0 {
		req.ChatID = req.TelegramUserID
	}
	o := newOrder(plan, req)
	o.IdempotencyKey = req.IdempotencyKey
	o, err = e.store.CreateOrder(o, e.cfg.Queue.OrderLimit)
	if errors.Is(err, store.ErrRepeatedOrder) {
		if o.SpecID != plan.SpecID || o.Region != req.Region || o.TelegramUserID != req.TelegramUserID {
			return store.Order{}, fmt.Errorf("%w: order %d was made with this key for %s in %s", ErrIdempotencyConflict, o.ID, o.SpecID, o.Region)
		}
		return o, err // already enqueued by the request that made it
	}
	if err != nil {
		return store.Order{}, err
	}
	e.actors.Send(e.dispatcher, enqueueOrder{order: o})
	e.feed.publish(e.actors, func() Event { return orderFeedEvent(o, "enqueued", e.cfg.Clock.Now()) })
	return o, nil
}

// Provision (re)enqueues an existing pending order (seed 002's POST /provision). The
// identities must match the order's, else it is reported as not found.
func (e *Engine) Provision(orderID, userID, telegramUserID int64) (store.Order, error) {
	if !e.started.Load() {
		return store.Order{}, ErrNotStarted
	}
	o, err := e.store.GetOrder(orderID)
	if err != nil {
		return store.Order{}, err
	}
	if (userID != 0 && o.UserID != userID) || (telegramUserID != 0 && o.TelegramUserID != telegramUserID) {
		return store.Order{}, store.ErrNotFound
	}
	if o.Status != store.OrderPending {
		return o, fmt.Errorf("%w: order %d is %s", ErrOrderState, o.ID, o.Status)
	}
	e.actors.Send(e.dispatcher, enqueueOrder{order: o})
	return o, nil
}

// GetOrder returns one order.
func (e *Engine) GetOrder(id int64) (store.Order, error) { return e.store.GetOrder(id) }

// ListOrders pages through orders newest first.
func (e *Engine) ListOrders(status string, limit int, before int64) ([]store.Order, error) {
	return e.store.ListOrders(status, limit, before)
}

// DeadLetters lists the dead-letter queue, newest first.
func (e *Engine) DeadLetters(limit int) ([]store.Order, error) { return e.store.DeadLetters(limit) }

func (e *Engine) askDispatcher(msg any) (orderOpResult, error) {
	if !e.started.Load() {
		return orderOpResult{}, ErrNotStarted
	}
	res, err := e.actors.Request(e.dispatcher, msg, requestTimeout).Result()
	if err != nil {
		return orderOpResult{}, fmt.Errorf("engine: dispatcher did not answer: %w", err)
	}
	r := res.(orderOpResult)
	return r, r.err
}

// CancelOrder cancels a pending order or one waiting for a retry; its funds are released.
func (e *Engine) CancelOrder(id int64) (store.Order, error) {
	r, err := e.askDispatcher(cancelOrder{id: id})
	return r.order, err
}

// RequeueDeadLetter puts one dead letter back on the queue with its attempts reset.
func (e *Engine) RequeueDeadLetter(id int64) (store.Order, error) {
	r, err := e.askDispatcher(requeueOrder{id: id})
	return r.order, err
}

// RequeueAllDeadLetters requeues the whole dead-letter list.
func (e *Engine) RequeueAllDeadLetters() (int, error) {
	r, err := e.askDispatcher(requeueAll{})
	return r.n, err
}

// PurgeDeadLetters empties the dead-letter list; the orders stay failed.
func (e *Engine) PurgeDeadLetters() (int, error) {
	r, err := e.askDispatcher(purgeDLQ{})
	return r.n, err
}

// QueueStats returns the queue now.
func (e *Engine) QueueStats() (QueueStats, error) {
	if !e.started.Load() {
		return QueueStats{}, ErrNotStarted
	}
	res, err := e.actors.Request(e.dispatcher, statsRequest{}, requestTimeout).Result()
	if err != nil {
		return QueueStats{}, err
	}
	return res.(QueueStats), nil
}

// Subscribe returns a live feed of events with a buffer of size events, and a
// function that ends the subscription (closing the channel).
func (e *Engine) Subscribe(size int) (<-chan Event, func(), error) {
	if !e.started.Load() {
		return nil, nil, ErrNotStarted
	}
	id := e.subs.Add(1)
	ch := make(chan Event, size)
	// Counted before the hub hears of it: every event published from now on reaches
	// the hub (see feedRef).
	e.feed.watchers.Add(1)
	e.actors.Send(e.feed.pid, subscribeFeed{id: id, ch: ch})
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			e.actors.Send(e.feed.pid, unsubscribeFeed{id: id})
			e.feed.watchers.Add(-1)
		})
	}, nil
}

// IsNotFound reports whether err means the order does not exist.
func IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// TerminateOrder deletes an active order's server and marks it terminated.
func (e *Engine) TerminateOrder(id int64) (store.Order, error) {
	r, err := e.askDispatcher(terminateOrder{id: id})
	return r.order, err
}

// Plans is the catalogue.
func (e *Engine) Plans() *catalog.Catalog { return e.cfg.Catalog }

// newOrder is the record of a request for plan, priced from the catalogue.
func newOrder(plan catalog.Plan, req OrderRequest) store.Order {
	return store.Order{
		UserID: req.UserID, TelegramUserID: req.TelegramUserID, ChatID: req.ChatID,
		SpecID: plan.SpecID, Region: req.Region, Provider: plan.Provider, PlanID: plan.Plan, PricePaid: plan.Price,
	}
}

// cancelPending is the cancel transition: only an order that has not started (pending,
// including one waiting for a retry) can be cancelled; its funds are then released.
func cancelPending(now time.Time) func(o *store.Order) error {
	return func(o *store.Order) error {
		if o.Status != store.OrderPending {
			return ErrOrderState
		}
		o.Status = store.OrderCancelled
		o.Record(now, "cancelled", "")
		return nil
	}
}

// RenewOrder pays an active or suspended order's next period from its user's balance
// now (a suspended server is powered back on); store.ErrInsufficientFunds when the
// balance cannot.
func (e *Engine) RenewOrder(id int64) (store.Order, error) {
	if !e.started.Load() {
		return store.Order{}, ErrNotStarted
	}
	o, err := e.store.GetOrder(id)
	if err != nil {
		return store.Order{}, err
	}
	now := e.cfg.Clock.Now()
	change := renewal(now, e.cfg.Billing.Period, o.Period)
	after := o
	after.History = nil
	if err := change(&after); err != nil {
		return o, err
	}
	n := notes{adminChat: e.cfg.AdminChatID, catalog: e.cfg.Catalog}
	say := n.billingRenewed(after)
	if o.Status == store.OrderSuspended {
		say = n.billingResumed(after)
	}
	done, queued, err := e.store.UpdateOrderNotify(id, change, say...)
	if errors.Is(err, errStaleRead) {
		err = fmt.Errorf("%w: order %d changed meanwhile; try again", ErrOrderState, id)
	}
	if err != nil {
		return o, err
	}
	e.actors.Send(e.outbox, queuedMessages{msgs: queued})
	if done.Op != "" {
		e.actors.Send(e.dispatcher, opEnqueue(o, done))
	}
	e.feed.publish(e.actors, func() Event { return orderFeedEvent(done, "renewed", now) })
	return done, nil
}

// SetAutoRenew turns an order's renewal on or off; with it off the server is deleted
// when its paid period ends, with no grace.
func (e *Engine) SetAutoRenew(id int64, on bool) (store.Order, error) {
	if !e.started.Load() {
		return store.Order{}, ErrNotStarted
	}
	now := e.cfg.Clock.Now()
	done, err := e.store.UpdateOrder(id, autoRenew(now, !on))
	if err != nil {
		return done, err
	}
	e.feed.publish(e.actors, func() Event { return orderFeedEvent(done, "auto_renew", now) })
	return done, nil
}
