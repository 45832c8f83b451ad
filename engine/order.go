package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/store"
)

// Provider creates and deletes servers at one cloud (engine/cloud implements it for
// Linode, Vultr and the simulator).
type Provider interface {
	Name() string
	Create(ctx context.Context, req cloud.CreateRequest) (cloud.Instance, error)
	FindByLabel(ctx context.Context, label string) (cloud.Instance, bool, error)
	Get(ctx context.Context, id string) (cloud.Instance, error)
	Delete(ctx context.Context, id string) error
}

// OrderStore is what the queue needs from the store.
type OrderStore interface {
	CreateOrder(o store.Order, limit store.OrderLimit, notes ...store.OutboxMessage) (store.Order, error)
	UpdateOrder(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, error)
	UpdateOrderNotify(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, []store.OutboxMessage, error)
	UpdateOrders(changes []store.OrderChange) ([]store.OrderResult, error)
	GetOrder(id int64) (store.Order, error)
	ListOrders(status string, limit int, before int64) ([]store.Order, error)
	UserOrders(user int64, limit int) ([]store.Order, error)
	OrdersWithStatus(status string, fn func(store.Order) error) error
	DeadLetters(limit int) ([]store.Order, error)
	OrdersWithOp(fn func(store.Order) error) error
	CountDeadLetters() (int, error)
	PurgeDeadLetters() (int, error)
}

// passwordUnknown marks a server whose provider chose the password in a response that
// was lost (a retry found the server by label).
const passwordUnknown = "\x00unknown"

// InstanceLabel is the provider label of an order's server: the idempotency key that
// lets a retried or recovered order find the server an earlier attempt created.
func InstanceLabel(orderID int64) string { return "hangar-order-" + strconv.FormatInt(orderID, 10) }

// runAttempt tells a fresh order actor to run one provisioning attempt of order, which
// the dispatcher has just moved to provisioning. It is sent by pointer, so that the
// order is not copied into the actor's frames (see attempt).
// password, when set, is the root password the start commit sealed for it.
type runAttempt struct {
	order    store.Order
	password string
}

type orderDeps struct {
	ctx        context.Context
	dispatcher *actor.PID // set when the dispatcher starts
	completer  *actor.PID // records succeeded attempts; the dispatcher starts it
	cfg        Config
	store      OrderStore
	providers  map[string]Provider
	catalog    *catalog.Catalog
	metrics    *metrics
	queue      *queueMetrics
	feed       *feedRef
	outbox     func() *actor.PID
	notes      notes
	password   PasswordSource
	// billing is the billing actor, told of each server that became active.
	billing func() *actor.PID
}

// orderActor owns one order for one attempt, from the moment the dispatcher's start
// commit has made it provisioning: it asks the provider for the server (finding it by
// label first, so a retry never creates a second one), and records the outcome — a
// retry at its due time or the dead letter queue — before telling the dispatcher and
// stopping. A server made ready is handed to the completer instead, which records it
// with other orders' in one commit and tells the dispatcher.
type orderActor struct {
	d  orderDeps
	id int64
	// password is the root password the start commit sealed, if it did.
	password string
	// reported is set once the attempt's end is in the dispatcher's or the
	// completer's hands.
	reported bool
}

func newOrderActor(d orderDeps, id int64) actor.Producer {
	return func() actor.Receiver { return &orderActor{d: d, id: id} }
}

func (a *orderActor) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started, actor.Stopped:
	case *runAttempt:
		defer a.d.guardAttempt(c, "order", func() { a.reportPanic(c, msg.order) })
		// The attempt runs on a new goroutine (see growStack): grown here, a few
		// frames deep, its stack is copied once instead of deep in the provider's
		// create, where copying meant decoding the stack maps of every frame above
		// (runtime.newstack was 2.2 % of the orders run's CPU).
		growStack()
		a.password = msg.password
		a.attempt(c, &msg.order)
		c.Engine().Poison(c.PID())
	}
}

// reportPanic reports an attempt that panicked before it reported (provisionSafely
// turns a panic in the provider call into a failure; this is one elsewhere: recording
// the outcome, writing a message) as a retry after the retry base. The order's start
// re-reads it: one still provisioning is resumed and finds its server by label, one
// whose outcome was recorded before the panic starts as that outcome says, or not at
// all.
func (a *orderActor) reportPanic(c *actor.Context, o store.Order) {
	if a.reported {
		return
	}
	o.DueAt = a.d.cfg.Clock.Now().Add(a.d.cfg.Queue.Retry.Base)
	a.report(c, outcomeRetry, &o)
}

var errSkip = errors.New("order no longer runnable")

// startAttempt is the change that starts an attempt (see dispatcher.start): a pending
// order counts a new attempt; one a crash caught in provisioning resumes under its
// attempt number.
func startAttempt(now time.Time) func(o *store.Order) error {
	return func(o *store.Order) error {
		switch o.Status {
		case store.OrderPending:
			o.Status = store.OrderProvisioning
			o.Attempts++
			o.Record(now, "started", "")
		case store.OrderProvisioning:
			o.Record(now, "resumed", "")
		default:
			return errSkip
		}
		return nil
	}
}

// attempt provisions o, records the outcome and reports it to the dispatcher, except
// for a server made ready: the completer records and reports that one. It never
// panics out: a panic becomes a retryable failure of the attempt, so a poison order
// ends in the dead letter queue instead of crashing the engine.
//
// The order goes by pointer down this path, and each outcome is reported where it is
// known rather than returned up it: the actor's goroutine is new for every order, and
// copies of the order in each frame made its stack outgrow the start and be copied.
func (a *orderActor) attempt(c *actor.Context, o *store.Order) {
	if a.settle(c, o) {
		return
	}
	start := time.Now()
	inst, password, err := a.provisionSafely(o)
	a.d.queue.provisionTime.Observe(time.Since(start).Seconds())
	switch {
	case err == nil:
		a.succeed(c, o, inst, password)
	case a.d.ctx.Err() != nil:
		a.report(c, outcomeInterrupted, o)
	default:
		a.fail(c, o, err)
	}
}

// report tells the dispatcher how the attempt ended.
func (a *orderActor) report(c *actor.Context, outcome string, o *store.Order) {
	a.reported = true
	c.Send(a.d.dispatcher, attemptFinished{id: a.id, outcome: outcome, order: *o})
}

// settle holds back an order a crash or stop caught provisioning: its create may
// still be finishing at the provider, where a find by label would not see it yet and
// a second create would make a second server. The order goes back to pending, due
// once the provider's settle time has passed, without counting an attempt; then it
// starts as usual and finds the server by label (keeping one if there are several).
func (a *orderActor) settle(c *actor.Context, o *store.Order) bool {
	if n := len(o.History); n == 0 || o.History[n-1].Event != "resumed" {
		return false
	}
	d := providerSettle(a.d.providers[o.Provider])
	if d <= 0 {
		return false
	}
	a.holdBack(c, o, d)
	return true
}

// holdBack is settle's rare case, apart so that its frame is not on every attempt's
// stack.
func (a *orderActor) holdBack(c *actor.Context, o *store.Order, d time.Duration) {
	now := a.d.cfg.Clock.Now()
	until := now.Add(d)
	waiting, err := a.d.store.UpdateOrder(a.id, func(o *store.Order) error {
		if o.Status != store.OrderProvisioning {
			return errSkip
		}
		o.Status = store.OrderPending
		o.Attempts = max(o.Attempts-1, 0) // the next start counts this attempt again
		o.DueAt, o.QueuedAt, o.SettleUntil = until, until, until
		o.Record(now, "settling", "")
		return nil
	})
	if err != nil {
		a.storeTrouble(c, o, now, err)
		return
	}
	a.d.cfg.Logger.Info("order: a create may still be finishing at the provider; looking for its server after the settle time",
		"order", a.id, "provider", o.Provider, "settle", d)
	a.publish(c, waiting, "settling")
	a.report(c, outcomeRetry, &waiting)
}

// createUnanswered is a create that got no answer (a timeout, a lost connection): the
// provider may have made, or still be making, the server.
type createUnanswered struct{ err error }

func (e *createUnanswered) Error() string { return e.err.Error() }
func (e *createUnanswered) Unwrap() error { return e.err }

// unanswered reports a provider call that ended without the provider's answer.
func unanswered(err error) bool {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return ce.Status == 0 && ce.Retryable
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// providerSettle is how long p may still be finishing a create whose caller went away;
// a provider that does not say gets none.
func providerSettle(p Provider) time.Duration {
	if s, ok := p.(interface{ Settle() time.Duration }); ok {
		return s.Settle()
	}
	return 0
}

// findServer looks for the order's server. After a settle (duplicates are possible:
// two creates may both have finished) it lists every server with the label, keeps one
// — a running one, else the oldest — and deletes the rest.
func (a *orderActor) findServer(ctx context.Context, prov Provider, o *store.Order, label string) (cloud.Instance, bool, error) {
	if !mayHaveServer(*o) {
		return cloud.Instance{}, false, nil
	}
	lister, ok := prov.(cloud.Lister)
	if !ok {
		in, found, err := prov.FindByLabel(ctx, label)
		if found && madeBeforeOrder(in, *o) {
			a.d.cfg.Logger.Warn("order: a server with the order's label was made before the order; not adopted",
				"order", a.id, "provider", o.Provider, "instance", in.ID, "created", in.Created)
			return cloud.Instance{}, false, err
		}
		return in, found, err
	}
	// Listed, not found by label: where labels are not unique (Vultr) the oldest
	// holder may be another install's server, and the order's own one is beside it.
	all, err := lister.List(ctx, label)
	if err != nil {
		return cloud.Instance{}, false, err
	}
	var mine []cloud.Instance
	for _, in := range all {
		if in.Label == label && !madeBeforeOrder(in, *o) {
			mine = append(mine, in)
		}
	}
	if len(mine) == 0 {
		return cloud.Instance{}, false, nil
	}
	keep := cloud.Keeper(mine, "")
	if o.SettleUntil.IsZero() {
		// Duplicates are deleted only after an unanswered create's settle time, when
		// they are known to be this order's; otherwise the reconciler reports them.
		return mine[keep], true, nil
	}
	for i, in := range mine {
		if i == keep {
			continue
		}
		if err := prov.Delete(ctx, in.ID); err != nil {
			return cloud.Instance{}, false, fmt.Errorf("delete duplicate server %s: %w", in.ID, err)
		}
		a.d.cfg.Logger.Warn("order: deleted a duplicate server", "order", a.id, "provider", o.Provider, "instance", in.ID, "kept", mine[keep].ID)
	}
	return mine[keep], true, nil
}

// serverClockSkew is how far a provider's clock may run behind hangar's: a server made
// more than this before its order was is not the order's.
const serverClockSkew = 10 * time.Minute

// madeBeforeOrder says in was made before o existed, so cannot be o's although it
// carries o's label: order ids are handed out again after a restore from an older
// backup, and another install on the same account numbers its orders the same way.
// Adopted, the new order's user was given a stranger's server; as a duplicate, the
// reconciler deleted it.
func madeBeforeOrder(in cloud.Instance, o store.Order) bool {
	return !in.Created.IsZero() && !o.CreatedAt.IsZero() && in.Created.Before(o.CreatedAt.Add(-serverClockSkew))
}

// lookupOnly says this attempt is the one past the retries that follows a last
// attempt whose create went unanswered: it looks for that server and creates none.
func (a *orderActor) lookupOnly(o *store.Order) bool {
	return o.Attempts > a.d.cfg.Queue.MaxRetries+1
}

// mayHaveServer reports whether an earlier attempt of o may have created its server,
// so that this attempt must look for it by label before creating one. Only an order's
// first start, with nothing before it, has nothing to find: the start commit that
// records "started" is durable before the create is sent, so any earlier create shows
// in the stored history as an earlier start or resume (kept across a requeue, which
// resets Attempts), in Attempts > 1, or in SettleUntil. A history long enough to have
// been cut short is treated as one that had earlier starts.
func mayHaveServer(o store.Order) bool {
	if o.Attempts > 1 || !o.SettleUntil.IsZero() || len(o.History) == 0 || len(o.History) >= store.MaxHistory {
		return true
	}
	last := len(o.History) - 1
	if o.History[last].Event != "started" {
		return true // resumed after a crash or a stop, or an unexpected shape
	}
	for _, ev := range o.History[:last] {
		switch ev.Event {
		case "started", "resumed", "settling", "retry_scheduled", "dead_lettered", "succeeded":
			return true
		}
	}
	return false
}

// choosesRootPassword reports a provider that picks the root password itself (Vultr).
func choosesRootPassword(p Provider) bool {
	pc, ok := p.(interface{ ChoosesRootPassword() bool })
	return ok && pc.ChoosesRootPassword()
}

func (a *orderActor) provisionSafely(o *store.Order) (inst cloud.Instance, password string, err error) {
	defer func() {
		if v := recover(); v != nil {
			a.d.metrics.panics.WithLabelValues("order").Inc()
			err = fmt.Errorf("internal error while provisioning: %v", v)
		}
	}()
	return a.provision(o)
}

// planError marks order data no retry can fix (unknown plan or provider).
type planError struct{ msg string }

func (e *planError) Error() string { return e.msg }

// provision returns the ready instance and, when the provider chose the root password
// itself, that password (otherwise "" and the sender derives it at send time).
func (a *orderActor) provision(o *store.Order) (cloud.Instance, string, error) {
	prov, ok := a.d.providers[o.Provider]
	if !ok {
		return cloud.Instance{}, "", &planError{fmt.Sprintf("provider %q is not configured", o.Provider)}
	}
	plan, ok := a.d.catalog.Get(o.SpecID)
	if !ok {
		return cloud.Instance{}, "", &planError{fmt.Sprintf("plan %q is not in the catalogue", o.SpecID)}
	}
	ctx, cancel := context.WithTimeout(a.d.ctx, a.d.cfg.Queue.ProvisionTimeout)
	defer cancel()
	label := InstanceLabel(o.ID)
	inst, found, err := a.findServer(ctx, prov, o, label)
	if err != nil {
		return cloud.Instance{}, "", err
	}
	password := ""
	if choosesRootPassword(prov) && found {
		password = passwordUnknown
	}
	if !found && a.lookupOnly(o) {
		// Not a planError: the order is dead-lettered as one whose retries ran out,
		// not told that its plan can never be had.
		return cloud.Instance{}, "", errors.New("no server was found after the last attempt's create went unanswered, and the retries are used up")
	}
	if !found {
		req := cloud.CreateRequest{Label: label, Region: o.Region, Plan: plan.Plan, SSHKeys: userSSHKeys(a.d.store, *o)}
		if !o.CreatedAt.IsZero() {
			req.NotBefore = o.CreatedAt.Add(-serverClockSkew)
		}
		req.Fresh = !mayHaveServer(*o)
		switch {
		case choosesRootPassword(prov):
		case a.password != "":
			// Sealed in the commit that started this first attempt.
			req.RootPassword = a.password
		default:
			// Kept sealed before the create, so that a retry or a resume after a crash
			// sends the same password the provider may already have.
			if req.RootPassword, err = a.d.password.Issue(*o); err != nil {
				return cloud.Instance{}, "", fmt.Errorf("root password: %w", err)
			}
		}
		inst, err = prov.Create(ctx, req)
		if err != nil {
			if unanswered(err) {
				return cloud.Instance{}, "", &createUnanswered{err: err}
			}
			return cloud.Instance{}, "", err
		}
		password = inst.RootPassword // set only by providers that choose it (Vultr)
	}
	// Ready, not only addressed: Linode answers a create with the IP and "provisioning",
	// and the user was told to log in to a server still being built.
	for !inst.Ready() {
		select {
		case <-ctx.Done():
			return cloud.Instance{}, "", fmt.Errorf("server %s is not up yet (status %q, address %q): %w", inst.ID, inst.Status, inst.IPv4, ctx.Err())
		case <-time.After(a.d.cfg.Queue.PollInterval):
		}
		if inst, err = prov.Get(ctx, inst.ID); err != nil {
			return cloud.Instance{}, "", err
		}
	}
	return inst, password, nil
}

// succeed hands the ready server to the completer with the user's message, written
// here so that the order actors, not the completer, spend the time on the texts.
func (a *orderActor) succeed(c *actor.Context, o *store.Order, inst cloud.Instance, password string) {
	ready := *o
	ready.IPAddress, ready.InstanceID = inst.IPv4, inst.ID
	msg, transient := a.d.notes.ready(ready, password)
	done := &completeAttempt{order: *o, inst: inst, msg: msg}
	if transient {
		done.secret = password
	}
	a.reported = true
	c.Send(a.d.completer, done)
}

func (a *orderActor) fail(c *actor.Context, o *store.Order, cause error) {
	now := a.d.cfg.Clock.Now()
	reason := cause.Error()
	var perm *planError
	permanent := errors.As(cause, &perm) || cloud.IsPermanent(cause)
	var cu *createUnanswered
	unanswered := errors.As(cause, &cu)
	// A create that got no answer may have made the server. On the last attempt too:
	// one more, after the settle time, only looks for it (see lookupOnly); failed at
	// once, the order was refunded while its server ran, unbilled and unreported.
	if !permanent && (o.Attempts <= a.d.cfg.Queue.MaxRetries || unanswered && o.Attempts == a.d.cfg.Queue.MaxRetries+1) {
		due := retryAt(now, a.d.cfg.Queue.Retry, o.Attempts, cause)
		// A create that got no answer may still be making the server: the retry waits
		// for the provider's settle time and then keeps one of what it finds.
		var settleUntil time.Time
		if unanswered {
			if d := providerSettle(a.d.providers[o.Provider]); d > 0 {
				settleUntil = now.Add(d)
				if settleUntil.After(due) {
					due = settleUntil
				}
			}
		}
		waiting, err := a.d.store.UpdateOrder(a.id, func(o *store.Order) error {
			if o.Status != store.OrderProvisioning {
				return errSkip
			}
			o.Status = store.OrderPending
			o.DueAt, o.QueuedAt = due, due
			if !settleUntil.IsZero() {
				o.SettleUntil = settleUntil
			}
			o.LastError = reason
			o.Record(now, "retry_scheduled", reason)
			return nil
		})
		if err != nil {
			a.storeTrouble(c, o, now, err)
			return
		}
		a.publish(c, waiting, "retry_scheduled")
		a.report(c, outcomeRetry, &waiting)
		return
	}
	current, _ := a.d.store.GetOrder(a.id)
	current.LastError = reason
	dead, queued, err := a.d.store.UpdateOrderNotify(a.id, func(o *store.Order) error {
		if o.Status != store.OrderProvisioning {
			return errSkip
		}
		o.Status = store.OrderFailed
		o.DeadLettered = true
		o.LastError = reason
		o.Record(now, "dead_lettered", reason)
		return nil
	}, a.d.notes.deadLettered(current, permanent)...)
	if err != nil {
		a.storeTrouble(c, o, now, err)
		return
	}
	c.Send(a.d.outbox(), queuedMessages{msgs: queued})
	a.d.cfg.Logger.Warn("order dead-lettered", "order", a.id, "attempts", dead.Attempts, "err", reason)
	a.publish(c, dead, "dead_lettered")
	a.report(c, outcomeDeadLettered, &dead)
}

// storeTrouble handles a failed outcome write: the order is still provisioning in the
// store, so it is tried again (and resumed by label) rather than lost.
func (a *orderActor) storeTrouble(c *actor.Context, o *store.Order, now time.Time, err error) {
	if errors.Is(err, errSkip) {
		a.report(c, outcomeSkipped, o)
		return
	}
	a.d.cfg.Logger.Error("order: could not record the attempt's outcome; will retry", "order", a.id, "err", err)
	o.DueAt = now.Add(a.d.cfg.Queue.Retry.Base)
	a.report(c, outcomeRetry, o)
}

func (a *orderActor) publish(c *actor.Context, o store.Order, event string) {
	a.d.feed.publish(c, func() Event { return orderFeedEvent(o, event, a.d.cfg.Clock.Now()) })
}
