package engine

import (
	"container/heap"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/store"
)

// Messages the dispatcher understands.
type (
	// enqueueOrder puts a durable pending order on the ready queue.
	enqueueOrder struct{ order store.Order }
	// enqueueOp puts an order's durable provider operation (store.Billing.Op: power
	// off, power on, delete) on the same ready queue, under the same concurrency,
	// retries, dead letters and one-per-order rule as a create.
	enqueueOp struct {
		order store.Order
		// revived: the operation replaced one in the dead letter list (the order left it).
		revived bool
	}
	// recoverOrders rebuilds the queue from the store at start; answered with recoverOrdersResult.
	recoverOrders       struct{}
	recoverOrdersResult struct {
		pending, resumed int
		err              error
	}
	// attemptFinished is sent by an order actor when its attempt has ended.
	attemptFinished struct {
		id      int64
		outcome string // succeeded, retry, dead_lettered, skipped, interrupted
		order   store.Order
	}
	cancelOrder struct{ id int64 }
	// forgetOrder drops an order cancelled elsewhere (the chat) from the ready queue.
	forgetOrder  struct{ id int64 }
	requeueOrder struct{ id int64 }
	requeueAll   struct{}
	purgeDLQ     struct{}
	statsRequest struct{}
	// awaitIdle is answered with idleNow once no attempt is in flight: Stop asks it
	// after cancelling the provider calls, so that an attempt that finishes meanwhile
	// records its outcome before the store closes.
	awaitIdle    struct{}
	idleNow      struct{}
	dispatchTick struct{}
	// dispatchKick runs dispatch after the messages already in the inbox (see kick).
	dispatchKick struct{}
	snapshotTick struct{}
	// setPause pauses (or resumes) starting attempts; answered with pauseResult.
	setPause struct {
		paused bool
		by     string
	}
	pauseResult struct {
		state   store.QueuePause
		changed bool
		err     error
	}
	orderOpResult struct {
		order store.Order
		n     int
		err   error
	}
)

// Outcomes of one attempt.
const (
	outcomeSucceeded    = "succeeded"
	outcomeRetry        = "retry"
	outcomeDeadLettered = "dead_lettered"
	outcomeSkipped      = "skipped"
	outcomeInterrupted  = "interrupted"
)

// ErrOrderState is returned when an action does not fit the order's status.
var ErrOrderState = errors.New("the order is not in a state that allows this")

type dispatcherDeps struct {
	cfg     Config
	store   OrderStore
	pauses  PauseStore
	pause   *pauseFlag
	webhook *webhookCell
	metrics *queueMetrics
	feed    *feedRef
	orders  orderDeps
}

// PauseStore keeps whether provisioning is paused (store.Store).
type PauseStore interface {
	QueuePause() (store.QueuePause, error)
	SetQueuePause(p store.QueuePause) error
}

// pauseFlag is the dispatcher's pause state as others read it (the bot, to tell a
// user ordering now why nothing starts). Only the dispatcher writes it, after the
// store has the same.
type pauseFlag struct {
	v atomic.Pointer[store.QueuePause]
}

func (f *pauseFlag) get() store.QueuePause {
	if p := f.v.Load(); p != nil {
		return *p
	}
	return store.QueuePause{}
}

func (f *pauseFlag) set(p store.QueuePause) { f.v.Store(&p) }

// queued is what the dispatcher remembers of a waiting order.
type queued struct {
	due      time.Time
	attempts int
	op       string // a provider operation (store.OpPowerOff, …); "" for provisioning
}

// queuedFor is how o waits: its provider operation's due time and attempts when it
// has one, else its provisioning's.
func queuedFor(o store.Order) queued {
	if o.Op != "" && (o.Status == store.OrderActive || o.Status == store.OrderSuspended) {
		return queued{due: o.OpDue, attempts: o.OpAttempts, op: o.Op}
	}
	return queued{due: o.DueAt, attempts: o.Attempts}
}

// dispatcher replaces Cloudflare Queues: it holds the ready queue (every pending order
// and its due time, rebuilt from the store's status index at start), starts due orders
// while fewer than MaxConcurrency are in flight — all those due at once in one group
// commit, then one order actor each — and is told how each attempt ended: by its order
// actor, or for a server made ready by its child the completer, which records many
// orders' successes in one commit. Outcomes are durable before the dispatcher hears
// of them.
type dispatcher struct {
	d     dispatcherDeps
	ready readyHeap
	// resumed holds the orders a stop or crash caught provisioning: they are started
	// before anything on ready, since their users have waited longest and a server
	// may already exist for them.
	resumed  readyHeap
	waiting  map[int64]queued
	inFlight map[int64]*actor.PID
	// requeued holds orders requeued from the dead-letter list before the actor of
	// their last attempt reported: they are queued when it does.
	requeued    map[int64]store.Order
	gen         uint64
	deadLetters int
	counts      struct{ enqueued, started, retried, succeeded, deadLettered uint64 }
	ticks       []actor.SendRepeater
	// idleWaiters are the senders of awaitIdle still waiting for the last attempt.
	idleWaiters []*actor.PID
	// kicked is set while a dispatchKick is in the inbox.
	kicked bool
}

func newDispatcher(d dispatcherDeps) actor.Producer {
	return func() actor.Receiver {
		return &dispatcher{d: d, waiting: map[int64]queued{}, inFlight: map[int64]*actor.PID{}, requeued: map[int64]store.Order{}}
	}
}

func (q *dispatcher) Receive(c *actor.Context) {
	defer recoverPanic(q.d.cfg.Logger, q.d.orders.metrics, "dispatcher", nil)
	switch msg := c.Message().(type) {
	case actor.Started:
		q.d.orders.dispatcher = c.PID()
		q.d.orders.completer = c.SpawnChild(newCompleter(q.d.orders), "complete")
		q.loadPause()
		q.ticks = append(q.ticks,
			c.SendRepeat(c.PID(), dispatchTick{}, q.d.cfg.Queue.Tick),
			c.SendRepeat(c.PID(), snapshotTick{}, time.Second))
	case actor.Stopped:
		for _, t := range q.ticks {
			t.Stop()
		}
	case recoverOrders:
		c.Respond(q.recover())
		q.dispatch(c)
	case enqueueOrder, enqueueOp:
		q.enqueue(msg)
		q.kick(c)
	case attemptFinished:
		q.finished(msg)
		q.kick(c)
		q.answerIdle(c)
	case dispatchKick:
		q.kicked = false
		q.dispatch(c)
	case awaitIdle:
		q.idleWaiters = append(q.idleWaiters, c.Sender())
		q.answerIdle(c)
	case dispatchTick:
		q.dispatch(c)
	case snapshotTick:
		s := q.stats()
		q.d.metrics.observe(s)
		q.d.feed.publish(c, func() Event { return Event{Type: "snapshot", Data: s} })
	case statsRequest:
		c.Respond(q.stats())
	case setPause:
		c.Respond(q.setPause(msg))
		q.kick(c)
	case cancelOrder:
		c.Respond(q.cancel(c, msg.id))
	case forgetOrder:
		delete(q.waiting, msg.id)
	case terminateOrder:
		if msg.replyTo == nil && c.Sender() != nil && msg.userID == 0 {
			msg.replyTo = c.Sender()
		}
		q.gen++
		pid := c.SpawnChild(newTerminator(q.d.orders), "terminate",
			actor.WithID(strconv.FormatInt(msg.id, 10)+"."+strconv.FormatUint(q.gen, 10)), actor.WithMaxRestarts(0))
		c.Send(pid, runTerminate{req: msg})
	case requeueOrder:
		res := q.requeue(c, msg.id)
		c.Respond(res)
		q.dispatch(c)
	case requeueAll:
		c.Respond(q.requeueAll(c))
		q.dispatch(c)
	case purgeDLQ:
		n, err := q.d.store.PurgeDeadLetters()
		q.deadLetters = max(0, q.deadLetters-n)
		c.Respond(orderOpResult{n: n, err: err})
		if n > 0 && q.d.orders.billing != nil {
			// A purge drops dead-lettered provider operations from their orders:
			// billing looks at the orders again, and queues what still applies (a paid
			// server's power on).
			if pid := q.d.orders.billing(); pid != nil {
				c.Send(pid, billingRescan{})
			}
		}
	}
}

// recover loads every pending order (with its original due time and attempts) and
// every order a crash caught in provisioning (resumed at once; the provider call is
// idempotent by the order's label, so a resumed order never creates a second server).
func (q *dispatcher) recover() recoverOrdersResult {
	var r recoverOrdersResult
	r.err = q.d.store.OrdersWithStatus(store.OrderPending, func(o store.Order) error {
		if q.push(o) {
			r.pending++
		}
		return nil
	})
	if r.err != nil {
		return r
	}
	r.err = q.d.store.OrdersWithStatus(store.OrderProvisioning, func(o store.Order) error {
		o.DueAt = q.d.cfg.Clock.Now()
		if q.pushTo(&q.resumed, o) {
			r.resumed++
		}
		return nil
	})
	if r.err != nil {
		return r
	}
	r.err = q.d.store.OrdersWithOp(func(o store.Order) error {
		if !o.DeadLettered && q.push(o) {
			r.pending++
		}
		return nil
	})
	if r.err != nil {
		return r
	}
	n, err := q.d.store.CountDeadLetters()
	q.deadLetters, r.err = n, err
	return r
}

// orderOf is the order an enqueue message carries.
func orderOf(msg any) store.Order {
	if m, ok := msg.(enqueueOp); ok {
		return m.order
	}
	return msg.(enqueueOrder).order
}

// enqueue queues an order or a provider operation. An operation whose order has an
// attempt in flight (queued between that attempt's outcome commit and its report: a
// termination, a top-up's power on) waits in requeued for the report, as a dead letter
// requeued early does: dropped here, it would not run before the next restart. A plain
// order in flight is left to its attempt's report, which queues it if it must run
// again (its copy here may be stale: a retry's delay would be lost).
func (q *dispatcher) enqueue(msg any) {
	o := orderOf(msg)
	op, isOp := msg.(enqueueOp)
	if _, running := q.inFlight[o.ID]; running && !isOp {
		return
	} else if running {
		// The attempt's report, not this message, settles the dead-letter count: a
		// dead letter it reports is not counted while requeued holds the order.
		q.requeued[o.ID] = o
		q.counts.enqueued++
		q.d.metrics.enqueued.Inc()
		return
	}
	if q.push(o) || q.replaceOp(o) {
		q.counts.enqueued++
		q.d.metrics.enqueued.Inc()
	}
	if isOp && op.revived {
		q.deadLetters = max(0, q.deadLetters-1)
	}
}

func (q *dispatcher) push(o store.Order) bool { return q.pushTo(&q.ready, o) }

func (q *dispatcher) pushTo(h *readyHeap, o store.Order) bool {
	if _, ok := q.waiting[o.ID]; ok {
		return false
	}
	if _, ok := q.inFlight[o.ID]; ok {
		return false
	}
	w := queuedFor(o)
	q.waiting[o.ID] = w
	heap.Push(h, readyItem{due: w.due, id: o.ID})
	return true
}

// replaceOp puts a provider operation that replaced the one waiting for its retry
// (a top-up turning a failing power off into a power on) at its own due time,
// rather than behind the old one's backoff.
func (q *dispatcher) replaceOp(o store.Order) bool {
	w, waiting := q.waiting[o.ID]
	next := queuedFor(o)
	if !waiting || next.op == "" || (next.op == w.op && !next.due.Before(w.due)) {
		return false
	}
	q.waiting[o.ID] = next // the old heap entry no longer matches and is skipped
	heap.Push(&q.ready, readyItem{due: next.due, id: o.ID})
	return true
}

// answerIdle tells the awaitIdle senders once nothing is in flight.
func (q *dispatcher) answerIdle(c *actor.Context) {
	if len(q.inFlight) > 0 {
		return
	}
	for _, pid := range q.idleWaiters {
		c.Send(pid, idleNow{})
	}
	q.idleWaiters = nil
}

// kick asks for a dispatch once the inbox holds nothing sent before it: orders enqueued
// and attempts finished meanwhile (many arrive while a start commit is waited for)
// then start in one group commit instead of one commit each.
func (q *dispatcher) kick(c *actor.Context) {
	if !q.kicked {
		q.kicked = true
		c.Send(c.PID(), dispatchKick{})
	}
}

// dispatch starts due orders while there is room, resumed ones first, and none once
// the engine is stopping (their provider calls would be cancelled at once) or while an
// operator has paused provisioning. A paused order keeps its place, due time and
// attempt count, so a retry that falls due meanwhile is not spent: it starts on resume.
func (q *dispatcher) dispatch(c *actor.Context) {
	if q.stopping() || q.d.pause.get().Paused {
		return
	}
	now := q.d.cfg.Clock.Now()
	var due []dueOrder
	for _, h := range []*readyHeap{&q.resumed, &q.ready} {
		for len(q.inFlight)+len(due) < q.d.cfg.Queue.MaxConcurrency && h.Len() > 0 {
			top := (*h)[0]
			if top.due.After(now) {
				break
			}
			heap.Pop(h)
			w, ok := q.waiting[top.id]
			if !ok || !w.due.Equal(top.due) {
				continue // cancelled, or superseded by a newer entry
			}
			delete(q.waiting, top.id)
			due = append(due, dueOrder{id: top.id, attempts: w.attempts, resumed: h == &q.resumed, op: w.op})
		}
	}
	if len(due) > 0 {
		q.start(c, due, now)
	}
}

// stopping is true from the moment the engine begins to stop (Engine.StopStarting).
func (q *dispatcher) stopping() bool { return q.d.orders.ctx.Err() != nil }

// dueOrder is an order dispatch took off the ready queue to start.
type dueOrder struct {
	id       int64
	attempts int
	resumed  bool
	op       string
}

// start moves the due orders to provisioning in one group commit, then gives each
// that is still runnable an order actor for its attempt. Orders that stopped being
// pending meanwhile (cancelled from the chat) are left alone.
func (q *dispatcher) start(c *actor.Context, due []dueOrder, now time.Time) {
	if due = q.startOps(c, due); len(due) == 0 {
		return
	}
	changes := make([]store.OrderChange, len(due))
	seal := q.firstPasswords(len(due))
	for i, it := range due {
		changes[i] = store.OrderChange{ID: it.id, Apply: startAttempt(now)}
		if seal != nil {
			changes[i].Seal = seal.change(i, q.d.orders.providers)
		}
	}
	results, err := q.startCommit(changes)
	if seal != nil {
		seal.release()
	}
	if err == nil && q.stopping() {
		// The engine began stopping during the commit: an attempt spawned now would be
		// cut off at once. The orders stay provisioning and are resumed, first, at the
		// next start, before any provider was called for them.
		q.d.cfg.Logger.Info("dispatcher: stopping; orders moved to provisioning are left for the next start", "orders", len(due))
		return
	}
	if err != nil {
		q.d.cfg.Logger.Error("dispatcher: could not start attempts; trying again later", "orders", len(due), "err", err)
		later := now.Add(q.d.cfg.Queue.Retry.Base)
		for _, it := range due {
			h := &q.ready
			if it.resumed {
				h = &q.resumed
			}
			q.pushTo(h, store.Order{ID: it.id, DueAt: later, Attempts: it.attempts})
		}
		return
	}
	for i, r := range results {
		if r.Err != nil {
			continue // no longer runnable, or gone
		}
		q.gen++
		// Not children: Hollywood stops a parent's children one by one, which with
		// thousands in flight would outlast any shutdown deadline. Each reports to the
		// dispatcher and stops itself.
		pid := c.Engine().Spawn(newOrderActor(q.d.orders, r.Order.ID), "order",
			actor.WithID(strconv.FormatInt(r.Order.ID, 10)+"."+strconv.FormatUint(q.gen, 10)),
			actor.WithInboxSize(4), actor.WithMaxRestarts(0))
		q.inFlight[r.Order.ID] = pid
		run := &runAttempt{order: r.Order}
		if seal != nil {
			run.password = seal.pws[i]
		}
		c.Send(pid, run)
		q.counts.started++
		q.d.metrics.started.Inc()
		q.publish(c, r.Order, "started")
	}
}

// startCommit is start's commit. A panic in it (in the store, or in sealing a
// password) becomes its error, so that the orders go back on the queue as for a
// refused commit: dispatch has taken them off it, and recovered in Receive instead,
// they would wait in no queue until a restart.
func (q *dispatcher) startCommit(changes []store.OrderChange) (results []store.OrderResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			q.d.orders.metrics.panics.WithLabelValues("dispatcher").Inc()
			results, err = nil, fmt.Errorf("internal error in the start commit: %v", v)
		}
	}()
	return q.d.store.UpdateOrders(changes)
}

// startPasswords seals the root passwords of the orders a start commit begins the
// first attempt of, in that commit: the password is durable before the provider is
// asked (so a retry or a resume sends the same one) without a commit of its own.
type startPasswords struct {
	seal    func(o store.Order) (string, store.SealedPassword, bool)
	release func()
	pws     []string // by change; in memory only, for the attempt's create
}

// firstPasswords returns the sealing for a start commit of n orders, or nil when the
// password source keeps nothing (derived passwords) or cannot seal now (the order's
// attempt then issues its password itself, as a resumed one does).
func (q *dispatcher) firstPasswords(n int) *startPasswords {
	ps, ok := q.d.orders.password.(passwordSealer)
	if !ok {
		return nil
	}
	seal, release, err := ps.Sealer()
	if err != nil {
		q.d.cfg.Logger.Warn("dispatcher: cannot seal passwords in the start commit; each attempt issues its own", "err", err)
		return nil
	}
	return &startPasswords{seal: seal, release: release, pws: make([]string, n)}
}

// change is the Seal of the i-th change: only an order whose first attempt this
// commit starts (nothing before it could have sealed a password or sent a create),
// at a provider that takes the password from hangar, gets one.
func (sp *startPasswords) change(i int, providers map[string]Provider) func(o *store.Order) (store.SealedPassword, bool) {
	return func(o *store.Order) (store.SealedPassword, bool) {
		sp.pws[i] = "" // the commit may be run again
		if o.Status != store.OrderProvisioning || mayHaveServer(*o) || choosesRootPassword(providers[o.Provider]) {
			return store.SealedPassword{}, false
		}
		pw, p, ok := sp.seal(*o)
		if !ok {
			return store.SealedPassword{}, false
		}
		sp.pws[i] = pw
		return p, true
	}
}

// startOps gives each due provider operation an actor of its own and returns the
// provisioning starts left. An operation needs no start commit: it is recorded on
// the order until it is done, and each is harmless to repeat after a crash.
func (q *dispatcher) startOps(c *actor.Context, due []dueOrder) []dueOrder {
	rest := due[:0:0]
	for _, it := range due {
		if it.op == "" {
			rest = append(rest, it)
			continue
		}
		q.gen++
		pid := c.Engine().Spawn(newOpActor(q.d.orders, it.id), "op",
			actor.WithID(strconv.FormatInt(it.id, 10)+"."+strconv.FormatUint(q.gen, 10)),
			actor.WithInboxSize(4), actor.WithMaxRestarts(0))
		q.inFlight[it.id] = pid
		c.Send(pid, runOp{op: it.op})
		q.counts.started++
		q.d.metrics.started.Inc()
	}
	return rest
}

func (q *dispatcher) finished(msg attemptFinished) {
	delete(q.inFlight, msg.id) // the order actor stops itself after reporting
	requeued, wasRequeued := q.requeued[msg.id]
	if wasRequeued {
		// An operator requeued the dead letter this attempt made, reading the store
		// before this report arrived: the order is pending again and is queued now.
		delete(q.requeued, msg.id)
		q.push(requeued)
	}
	switch msg.outcome {
	case outcomeSucceeded:
		q.counts.succeeded++
		q.d.metrics.succeeded.Inc()
	case outcomeRetry:
		q.counts.retried++
		q.d.metrics.retried.Inc()
		q.push(msg.order)
	case outcomeDeadLettered:
		q.counts.deadLettered++
		q.d.metrics.deadLettered.Inc()
		if !wasRequeued { // else it left the list before it was counted
			q.deadLetters++
		}
	case outcomeInterrupted:
		// Shutting down: the order stays provisioning and is resumed at the next start.
	}
}

// loadPause reads the pause from the store: a pause outlives a restart, and a
// dispatcher rebuilt after a panic must not forget it either. An unreadable record
// leaves provisioning running, loudly: stopping every order on a read error would be
// the worse surprise.
func (q *dispatcher) loadPause() {
	p, err := q.d.pauses.QueuePause()
	if err != nil {
		q.d.cfg.Logger.Error("dispatcher: cannot read whether provisioning is paused; running", "err", err)
		return
	}
	q.d.pause.set(p)
	if p.Paused {
		q.d.cfg.Logger.Warn("provisioning is paused: orders are accepted and wait until an operator resumes it",
			"since", p.Since, "by", p.By)
	}
}

// setPause records the new state before acting on it, so that an answered pause is
// one a restart keeps. Pausing twice keeps the first time: "paused since" is when
// work stopped.
func (q *dispatcher) setPause(msg setPause) pauseResult {
	cur := q.d.pause.get()
	if cur.Paused == msg.paused {
		return pauseResult{state: cur}
	}
	next := store.QueuePause{Paused: msg.paused, Since: q.d.cfg.Clock.Now().UTC(), By: msg.by}
	if err := q.d.pauses.SetQueuePause(next); err != nil {
		return pauseResult{state: cur, err: err}
	}
	q.d.pause.set(next)
	if next.Paused {
		q.d.cfg.Logger.Warn("provisioning paused: no order attempt starts until it is resumed", "by", msg.by, "in_flight", len(q.inFlight))
	} else {
		q.d.cfg.Logger.Info("provisioning resumed", "by", msg.by, "paused_for", next.Since.Sub(cur.Since).Round(time.Second), "waiting", len(q.waiting))
	}
	return pauseResult{state: next, changed: true}
}

func (q *dispatcher) cancel(c *actor.Context, id int64) orderOpResult {
	if _, busy := q.inFlight[id]; busy {
		return orderOpResult{err: ErrOrderState}
	}
	current, err := q.d.store.GetOrder(id)
	if err != nil {
		return orderOpResult{err: err}
	}
	o, err := q.d.store.UpdateOrder(id, cancelPending(q.d.cfg.Clock.Now()), q.d.orders.notes.cancelled(current)...)
	if err != nil {
		return orderOpResult{err: err}
	}
	delete(q.waiting, id)
	q.publish(c, o, "cancelled")
	// The user's "cancelled" message is in the outbox now: offer it at once rather
	// than at the outbox's next rescan (up to 30 s later).
	if pid := q.d.orders.outbox(); pid != nil {
		c.Send(pid, pokeOutbox{})
	}
	return orderOpResult{order: o}
}

func (q *dispatcher) requeue(c *actor.Context, id int64) orderOpResult {
	o, err := q.d.store.UpdateOrder(id, func(o *store.Order) error {
		if o.DeadLettered && o.Op != "" {
			// A provider operation that ran out of retries starts over.
			now := q.d.cfg.Clock.Now()
			o.QueueOp(o.Op, now)
			o.LastError = ""
			o.Record(now, "requeued", "")
			return nil
		}
		if o.Status != store.OrderFailed || !o.DeadLettered {
			return ErrOrderState
		}
		now := q.d.cfg.Clock.Now()
		o.Status = store.OrderPending
		o.DeadLettered = false
		o.Attempts = 0
		o.LastError = ""
		o.DueAt, o.QueuedAt = now, now
		o.Record(now, "requeued", "")
		return nil
	})
	if err != nil {
		return orderOpResult{err: err}
	}
	if _, running := q.inFlight[id]; running {
		// Its attempt has not reported yet, so it is neither counted as a dead letter
		// nor free to queue: finished does both.
		q.requeued[id] = o
	} else {
		q.deadLetters = max(0, q.deadLetters-1)
		q.push(o)
	}
	q.counts.enqueued++
	q.d.metrics.enqueued.Inc()
	q.publish(c, o, "requeued")
	return orderOpResult{order: o}
}

func (q *dispatcher) requeueAll(c *actor.Context) orderOpResult {
	letters, err := q.d.store.DeadLetters(1 << 20)
	if err != nil {
		return orderOpResult{err: err}
	}
	n := 0
	for _, o := range letters {
		r := q.requeue(c, o.ID)
		if r.err != nil && !errors.Is(r.err, ErrOrderState) {
			return orderOpResult{n: n, err: r.err}
		}
		if r.err == nil {
			n++
		}
	}
	return orderOpResult{n: n}
}

func (q *dispatcher) publish(c *actor.Context, o store.Order, event string) {
	q.d.feed.publish(c, func() Event { return orderFeedEvent(o, event, q.d.cfg.Clock.Now()) })
}

func orderFeedEvent(o store.Order, event string, at time.Time) Event {
	ev := OrderEvent{At: at, Event: event, OrderID: o.ID, UserID: o.UserID, Status: o.Status, Attempt: o.Attempts}
	switch event {
	case "retry_scheduled", "dead_lettered":
		ev.Error = o.LastError // only the steps an error caused carry it
	}
	return Event{Type: "order", Data: ev}
}

func (q *dispatcher) stats() QueueStats {
	now := q.d.cfg.Clock.Now()
	a := q.d.cfg.Queue.Alarms
	s := QueueStats{
		At: now, InFlight: len(q.inFlight), MaxConcurrency: q.d.cfg.Queue.MaxConcurrency,
		Enqueued: q.counts.enqueued, Started: q.counts.started, Retried: q.counts.retried,
		Succeeded: q.counts.succeeded, DeadLettered: q.counts.deadLettered, DeadLetters: q.deadLetters,
		Thresholds: AlarmThresholds{Depth: a.Depth, DeadLetters: a.DeadLetters, LagSeconds: a.Lag.Seconds()},
	}
	if p := q.d.pause.get(); p.Paused {
		since := p.Since
		s.Paused, s.PausedSince = true, &since
	}
	var oldest time.Time
	for _, w := range q.waiting {
		if w.attempts > 0 && w.due.After(now) {
			s.WaitingRetry++
		} else {
			s.Pending++
			if oldest.IsZero() || w.due.Before(oldest) {
				oldest = w.due
			}
		}
	}
	s.Depth = s.Pending + s.WaitingRetry
	if !oldest.IsZero() && now.After(oldest) {
		s.LagSeconds = now.Sub(oldest).Seconds()
	}
	s.Alarms = AlarmStates{
		Depth:       s.Depth > a.Depth,
		DeadLetters: s.DeadLetters > a.DeadLetters,
		Lag:         s.LagSeconds > a.Lag.Seconds(),
	}
	if w := q.d.webhook.load(); w != nil {
		s.Telegram = w
		s.Alarms.Telegram = w.alarm(now)
	}
	if ds, ok := q.d.store.(diskReporter); ok {
		st := ds.Storage()
		s.Disk = &DiskState{FreeBytes: st.FreeBytes, FloorBytes: st.MinFreeBytes, Refusing: st.Refusing}
		s.Alarms.Disk = st.Refusing != ""
	}
	return s
}

// readyItem is one entry of the ready queue, ordered by due time then id.
type readyItem struct {
	due time.Time
	id  int64
}

type readyHeap []readyItem

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].id < h[j].id
	}
	return h[i].due.Before(h[j].due)
}
func (h readyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)   { *h = append(*h, x.(readyItem)) }
func (h *readyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
