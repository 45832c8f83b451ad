package engine

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/anthdm/hollywood/actor"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/store"
)

// BillingConfig tunes billing (issue 17). Zero values take the defaults.
type BillingConfig struct {
	// Period is what one payment buys (default 720h); the first is paid when the
	// server becomes active, each next one at the end of the last.
	Period time.Duration
	// Grace is how long a server whose renewal failed stays suspended (powered off)
	// before it is deleted (default 72h; negative: none).
	Grace time.Duration
	// Remind lists how long before a period's end the user is told that the balance
	// will not pay the next one (default 72h and 24h; an empty, non-nil list: never).
	Remind []time.Duration
	// Tick is how often due orders are looked at (default Period/20, within 50ms-1s).
	Tick time.Duration
}

func (b *BillingConfig) setDefaults() {
	if b.Period <= 0 {
		b.Period = 720 * time.Hour
	}
	switch {
	case b.Grace == 0:
		b.Grace = 72 * time.Hour
	case b.Grace < 0:
		b.Grace = 0
	}
	if b.Remind == nil {
		b.Remind = []time.Duration{72 * time.Hour, 24 * time.Hour}
	}
	// Longest first, so that reminder i is due before reminder i+1.
	b.Remind = slices.Clone(b.Remind)
	slices.SortFunc(b.Remind, func(x, y time.Duration) int { return cmp.Compare(y, x) })
	if b.Tick <= 0 {
		b.Tick = min(max(b.Period/20, 50*time.Millisecond), time.Second)
	}
}

// rescanEvery is how often the active orders are read again from the store, to
// pick up a change made elsewhere (an operator, /renew): a safety net, since each
// due entry reads its order again anyway.
func (b BillingConfig) rescanEvery() time.Duration {
	return min(max(b.Period/10, time.Second), time.Minute)
}

// BillingStore is what billing needs from the store.
type BillingStore interface {
	GetOrder(id int64) (store.Order, error)
	UpdateOrderNotify(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, []store.OutboxMessage, error)
	OrdersWithStatus(status string, fn func(store.Order) error) error
	GetBalance(user int64) (store.Balance, error)
	UserOrders(user int64, limit int) ([]store.Order, error)
}

// Messages the billing actor understands.
type (
	billingTick   struct{}
	billingRescan struct{}
	// watchOrder says an order just became active. It carries the order as that
	// commit left it, read-only: reading it back was a fortieth of an order's CPU, and
	// a copy that has moved on since is harmless, since each due step reads the order
	// again and the rescan replaces every due time.
	watchOrder struct{ order *store.Order }
)

const (
	billingKind = "billing"
	billingID   = "main"
)

type billingDeps struct {
	ctx        context.Context
	cfg        Config
	store      BillingStore
	dispatcher *actor.PID
	outbox     *actor.PID
	feed       *feedRef
	metrics    *metrics
	notes      notes
	steps      *prometheus.CounterVec
}

// newBillingSteps counts billing's steps by kind (renewed, reminded, suspended,
// resumed, expired, grace_ended) for /metrics.
func newBillingSteps(reg prometheus.Registerer) *prometheus.CounterVec {
	steps := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hangar_billing_steps_total", Help: "Billing steps taken: renewals, reminders, suspensions, resumptions, endings.",
	}, []string{"step"})
	if reg != nil {
		reg.MustRegister(steps)
	}
	return steps
}

// billingPID is the billing actor, or nil before it runs.
func (e *Engine) billingPID() *actor.PID { return e.actors.Registry.GetPID(billingKind, billingID) }

// billingActor renews, reminds, suspends and ends servers when their paid time
// says so. It holds nothing the store does not: the due times it waits for are
// derived from each order's paid_until (rebuilt on Started and rescanned), and every
// step is one conditional commit on the order — a renewal moves the order from
// period n to n+1 and charges it in the same commit, so a step repeated after a
// crash or read from a stale copy changes nothing. Suspended orders are few and
// wait on money rather than time, so they are all looked at on every tick: a top-up
// brings a server back within one tick, whoever made it.
type billingActor struct {
	d     billingDeps
	due   readyHeap
	next  map[int64]time.Time
	ticks []actor.SendRepeater
	// checked holds, per order, the reminders of its current period found not needed
	// (the balance covered the renewal): not looked at again until the next one.
	checked map[int64]checkedReminders
}

type checkedReminders struct {
	until time.Time // the period they belong to (PaidUntil)
	n     int
}

func newBillingActor(d billingDeps) actor.Producer {
	return func() actor.Receiver {
		return &billingActor{d: d, next: map[int64]time.Time{}, checked: map[int64]checkedReminders{}}
	}
}

func (b *billingActor) Receive(c *actor.Context) {
	defer recoverPanic(b.d.cfg.Logger, b.d.metrics, billingKind, nil)
	switch msg := c.Message().(type) {
	case actor.Started:
		b.ticks = append(b.ticks,
			c.SendRepeat(c.PID(), billingTick{}, b.d.cfg.Billing.Tick),
			c.SendRepeat(c.PID(), billingRescan{}, b.d.cfg.Billing.rescanEvery()))
		b.rescan()
	case actor.Stopped:
		for _, t := range b.ticks {
			t.Stop()
		}
	case billingTick:
		if b.d.ctx.Err() == nil {
			b.runDue(c)
			b.reviewSuspended(c)
		}
	case billingRescan:
		b.rescan()
	case watchOrder:
		b.schedule(*msg.order, b.d.cfg.Clock.Now())
	}
}

// rescan rebuilds the due times from every active order.
func (b *billingActor) rescan() {
	b.due, b.next = nil, map[int64]time.Time{}
	now := b.d.cfg.Clock.Now()
	err := b.d.store.OrdersWithStatus(store.OrderActive, func(o store.Order) error {
		b.schedule(o, now)
		return nil
	})
	if err != nil {
		b.d.cfg.Logger.Error("billing: cannot read the active orders; trying again at the next rescan", "err", err)
		return
	}
	// An order ended outside billing (terminated, cancelled by an operator) is never
	// scheduled again, so its entry would stay for the daemon's life.
	for id := range b.checked {
		if _, active := b.next[id]; !active {
			delete(b.checked, id)
		}
	}
}

// schedule remembers when o needs looking at next, as billing saw it at now: the
// moment it looked at the order, not whenever schedule runs, so that a reminder that
// came due while the step was being committed is still sent, not skipped.
func (b *billingActor) schedule(o store.Order, now time.Time) {
	if o.Status != store.OrderActive || o.Op == store.OpDelete || o.Terminating {
		delete(b.next, o.ID)
		delete(b.checked, o.ID)
		return
	}
	at := b.nextDue(o, now)
	if cur, ok := b.next[o.ID]; ok && cur.Equal(at) {
		return
	}
	b.next[o.ID] = at
	heap.Push(&b.due, readyItem{due: at, id: o.ID})
}

// remindersDue is how many of the period's reminders are due at now.
func (b *billingActor) remindersDue(o store.Order, now time.Time) int {
	n := 0
	for _, r := range b.d.cfg.Billing.Remind {
		if !now.Before(o.PaidUntil.Add(-r)) {
			n++
		}
	}
	return n
}

// nextDue is the next reminder's time, or the period's end.
func (b *billingActor) nextDue(o store.Order, now time.Time) time.Time {
	if o.PaidUntil.IsZero() || (o.PoweredOff && o.Op == "") {
		return now
	}
	k := b.remindersDue(o, now)
	handled := o.Reminded
	if c := b.checked[o.ID]; c.until.Equal(o.PaidUntil) {
		handled = max(handled, c.n)
	}
	if !o.AutoRenewOff && handled < k && now.Before(o.PaidUntil) {
		// A reminder came due unsent: while the daemon was down, or before a rescan
		// rebuilt the due times. Rebuilt from the next one not yet due, it was lost.
		return now
	}
	if !o.AutoRenewOff && k < len(b.d.cfg.Billing.Remind) {
		if at := o.PaidUntil.Add(-b.d.cfg.Billing.Remind[k]); at.Before(o.PaidUntil) {
			return at
		}
	}
	return o.PaidUntil
}

func (b *billingActor) runDue(c *actor.Context) {
	now := b.d.cfg.Clock.Now()
	for b.due.Len() > 0 && !b.due[0].due.After(now) {
		it := heap.Pop(&b.due).(readyItem)
		if at, ok := b.next[it.id]; !ok || !at.Equal(it.due) {
			continue // superseded
		}
		delete(b.next, it.id)
		o, err := b.d.store.GetOrder(it.id)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				b.d.cfg.Logger.Error("billing: cannot read an order; looking again at the next rescan", "order", it.id, "err", err)
			}
			continue
		}
		b.review(c, o, now)
	}
}

// review takes the step an active order's time calls for. An order being terminated
// takes none: its server is going, and a renewal would charge for it.
func (b *billingActor) review(c *actor.Context, o store.Order, now time.Time) {
	if o.Status != store.OrderActive || o.Op == store.OpDelete || o.Terminating {
		return
	}
	switch {
	case o.PoweredOff && o.Op == "":
		// Paid for and off with nothing queued to turn it on: its power on was
		// dropped (an operator purged it as a dead letter). It is queued again.
		b.commit(c, o, now, "power_on_queued", func(o *store.Order) error {
			o.QueueOp(store.OpPowerOn, now)
			return nil
		}, nil)
	case o.PaidUntil.IsZero():
		// Active before billing existed: its first period starts now.
		b.commit(c, o, now, "billing_started", func(o *store.Order) error {
			o.Period, o.PaidUntil = max(o.Period, 1), now.Add(b.d.cfg.Billing.Period)
			return nil
		}, nil)
	case !now.Before(o.PaidUntil) && o.AutoRenewOff:
		b.end(c, o, false)
	case !now.Before(o.PaidUntil):
		b.renewOrSuspend(c, o, now)
	default:
		b.remind(c, o, now)
	}
}

// remind tells the user, once per reminder and period, that the balance will not pay
// the next period. A balance that covers it sends nothing and marks nothing: should
// it be spent before the next reminder, that one still goes.
func (b *billingActor) remind(c *actor.Context, o store.Order, now time.Time) {
	k := b.remindersDue(o, now)
	if o.AutoRenewOff || k <= o.Reminded {
		b.schedule(o, now)
		return
	}
	bal, err := b.d.store.GetBalance(o.UserID)
	if err != nil {
		b.retryLater(o, err)
		return
	}
	// What the balance has left for this renewal once the user's renewals due before
	// it are paid: two servers ending together on a balance for one each compared
	// the whole balance with their own price, neither reminded, and one was suspended
	// without a warning.
	left := b.leftFor(o, bal.Available)
	if left >= o.PricePaid {
		b.checked[o.ID] = checkedReminders{until: o.PaidUntil, n: k}
		b.schedule(o, now)
		return
	}
	b.commit(c, o, now, "reminded", func(o *store.Order) error {
		o.Reminded = k
		return nil
	}, func(o store.Order) []store.OutboxMessage { return b.d.notes.billingReminder(o, bal.Available, left) })
}

// leftFor is what the balance has left for o's renewal once the user's renewals due
// before it are paid, in the order they run (end of period, then id); a renewal the
// balance cannot pay takes nothing (its server is suspended instead).
func (b *billingActor) leftFor(o store.Order, available int64) int64 {
	if o.TelegramUserID == 0 {
		return available
	}
	orders, err := b.d.store.UserOrders(o.TelegramUserID, 1000)
	if err != nil {
		b.d.cfg.Logger.Warn("billing: cannot read the user's other servers for a reminder; counting this one alone", "order", o.ID, "err", err)
		return available
	}
	var first []store.Order
	for _, x := range orders {
		switch {
		case x.ID == o.ID, x.UserID != o.UserID, x.Status != store.OrderActive, x.AutoRenewOff, x.Terminating, x.Op == store.OpDelete:
		case x.PaidUntil.Before(o.PaidUntil), x.PaidUntil.Equal(o.PaidUntil) && x.ID < o.ID:
			first = append(first, x)
		}
	}
	slices.SortFunc(first, func(a, c store.Order) int {
		if d := a.PaidUntil.Compare(c.PaidUntil); d != 0 {
			return d
		}
		return cmp.Compare(a.ID, c.ID)
	})
	for _, x := range first {
		if available >= x.PricePaid {
			available -= x.PricePaid
		}
	}
	return available
}

// renewOrSuspend pays the next period from the balance, or suspends the server when
// the balance cannot.
func (b *billingActor) renewOrSuspend(c *actor.Context, o store.Order, now time.Time) {
	period := b.d.cfg.Billing.Period
	_, err := b.commitChange(c, o, now, "renewed", renewal(now, period, o.Period), b.d.notes.billingRenewed)
	if !errors.Is(err, store.ErrInsufficientFunds) {
		return
	}
	bal, err := b.d.store.GetBalance(o.UserID)
	if err != nil {
		b.retryLater(o, err)
		return
	}
	grace := b.d.cfg.Billing.Grace
	b.commit(c, o, now, "suspended", func(o *store.Order) error {
		o.Status = store.OrderSuspended
		// From the suspension, not the period's end: after a downtime or a clock jump
		// past end + grace, the server was suspended and deleted in one tick, and the
		// user told a deadline already gone.
		from := o.PaidUntil
		if now.After(from) {
			from = now
		}
		o.GraceUntil = from.Add(grace)
		o.QueueOp(store.OpPowerOff, now)
		return nil
	}, func(o store.Order) []store.OutboxMessage { return b.d.notes.billingSuspended(o, bal.Available) })
}

// end queues the deletion of a server whose time is over.
func (b *billingActor) end(c *actor.Context, o store.Order, graceOver bool) {
	event := "expired"
	if graceOver {
		event = "grace_ended"
	}
	now := b.d.cfg.Clock.Now()
	b.commit(c, o, now, event, func(o *store.Order) error {
		o.QueueOp(store.OpDelete, now)
		return nil
	}, func(o store.Order) []store.OutboxMessage { return b.d.notes.billingEnding(o, graceOver) })
}

// reviewSuspended renews each suspended order the balance can now pay, and ends
// those whose grace is over.
func (b *billingActor) reviewSuspended(c *actor.Context) {
	now := b.d.cfg.Clock.Now()
	var waiting []store.Order
	err := b.d.store.OrdersWithStatus(store.OrderSuspended, func(o store.Order) error {
		if o.Op != store.OpDelete && !o.Terminating {
			waiting = append(waiting, o)
		}
		return nil
	})
	if err != nil {
		b.d.cfg.Logger.Error("billing: cannot read the suspended orders", "err", err)
		return
	}
	for _, o := range waiting {
		if !o.AutoRenewOff {
			bal, err := b.d.store.GetBalance(o.UserID)
			if err != nil {
				b.d.cfg.Logger.Error("billing: cannot read a balance", "user", o.UserID, "err", err)
				continue
			}
			if bal.Available >= o.PricePaid {
				_, err := b.commitChange(c, o, now, "resumed", renewal(now, b.d.cfg.Billing.Period, o.Period), b.d.notes.billingResumed)
				if err == nil || !errors.Is(err, store.ErrInsufficientFunds) {
					continue
				}
			}
		}
		if o.AutoRenewOff || !now.Before(o.GraceUntil) {
			b.end(c, o, !o.AutoRenewOff)
		}
	}
}

// commit applies change to o, guarded against a stale read: it changes nothing if
// the order moved on since o was read (see commitChange).
func (b *billingActor) commit(c *actor.Context, o store.Order, now time.Time, event string, change func(o *store.Order) error, say func(store.Order) []store.OutboxMessage) {
	_, _ = b.commitChange(c, o, now, event, func(x *store.Order) error {
		if !sameBilling(*x, o) {
			return errStaleRead
		}
		if err := change(x); err != nil {
			return err
		}
		x.Record(now, event, "")
		return nil
	}, say)
}

// sameBilling reports whether x is still the order billing decided on.
func sameBilling(x, o store.Order) bool {
	return x.Status == o.Status && x.Period == o.Period && x.PaidUntil.Equal(o.PaidUntil) &&
		x.Op == o.Op && x.AutoRenewOff == o.AutoRenewOff && x.Reminded == o.Reminded &&
		x.Terminating == o.Terminating
}

// commitChange commits change with the notes say makes of the changed order, hands
// the notes to the sender and a queued provider operation to the dispatcher, and
// schedules the order's next step as of now, when billing decided on it.
func (b *billingActor) commitChange(c *actor.Context, o store.Order, now time.Time, event string, change func(o *store.Order) error, say func(store.Order) []store.OutboxMessage) (store.Order, error) {
	var notes []store.OutboxMessage
	if say != nil {
		after := o
		after.History = nil
		if err := change(&after); err != nil {
			b.skip(o, err)
			return o, err
		}
		notes = say(after)
	}
	done, queued, err := b.d.store.UpdateOrderNotify(o.ID, change, notes...)
	if err != nil {
		b.skip(o, err)
		return o, err
	}
	b.afterCommit(c, o, done, queued, event, now)
	return done, nil
}

func (b *billingActor) skip(o store.Order, err error) {
	switch {
	case errors.Is(err, store.ErrInsufficientFunds):
	case errors.Is(err, errStaleRead), errors.Is(err, ErrOrderState), errors.Is(err, store.ErrNotFound):
		// Moved on since it was read: the rescan or the next tick reads it again.
		if fresh, ferr := b.d.store.GetOrder(o.ID); ferr == nil {
			b.schedule(fresh, b.d.cfg.Clock.Now())
		}
	default:
		b.retryLater(o, err)
	}
}

// retryLater looks at o again after a tick's worth of backoff.
func (b *billingActor) retryLater(o store.Order, err error) {
	b.d.cfg.Logger.Error("billing: could not take a step; trying again", "order", o.ID, "err", err)
	at := b.d.cfg.Clock.Now().Add(max(b.d.cfg.Billing.Tick, time.Second))
	b.next[o.ID] = at
	heap.Push(&b.due, readyItem{due: at, id: o.ID})
}

func (b *billingActor) afterCommit(c *actor.Context, before, o store.Order, queued []store.OutboxMessage, event string, now time.Time) {
	if len(queued) > 0 {
		c.Send(b.d.outbox, queuedMessages{msgs: queued})
	}
	if o.Op != "" {
		c.Send(b.d.dispatcher, opEnqueue(before, o))
	}
	b.d.feed.publish(c, func() Event { return orderFeedEvent(o, event, b.d.cfg.Clock.Now()) })
	b.d.steps.WithLabelValues(event).Inc()
	b.d.cfg.Logger.Info("billing", "order", o.ID, "event", event, "status", o.Status, "period", o.Period, "paid_until", o.PaidUntil)
	b.schedule(o, now)
}

// renewal moves o from period seen to the next, paid in the same commit (the store
// charges every period gained, keyed by order and period). An active order's period
// follows the last; a suspended one comes back with a period from now, and its
// server is powered back on through the queue.
func renewal(now time.Time, period time.Duration, seen int) func(o *store.Order) error {
	return func(o *store.Order) error {
		if o.Period != seen {
			return errStaleRead
		}
		if (o.Status != store.OrderActive && o.Status != store.OrderSuspended) || o.Op == store.OpDelete || o.Period == 0 {
			return fmt.Errorf("%w: order %d is %s", ErrOrderState, o.ID, o.Status)
		}
		if o.Terminating {
			return fmt.Errorf("%w: order %d is being terminated", ErrOrderState, o.ID)
		}
		o.Period++
		o.Reminded = 0
		if o.Status == store.OrderSuspended {
			o.Status = store.OrderActive
			o.GraceUntil = time.Time{}
			o.PaidUntil = now.Add(period)
			o.QueueOp(store.OpPowerOn, now)
			o.Record(now, "resumed", "")
			return nil
		}
		o.PaidUntil = o.PaidUntil.Add(period)
		o.Record(now, "renewed", "")
		return nil
	}
}

// autoRenew turns an order's renewal off (it then ends with its paid period) or on.
func autoRenew(now time.Time, off bool) func(o *store.Order) error {
	return func(o *store.Order) error {
		if (o.Status != store.OrderActive && o.Status != store.OrderSuspended) || o.Op == store.OpDelete {
			return fmt.Errorf("%w: order %d is %s", ErrOrderState, o.ID, o.Status)
		}
		if o.AutoRenewOff == off {
			return nil
		}
		o.AutoRenewOff = off
		event := "auto_renew_on"
		if off {
			event = "auto_renew_off"
		}
		o.Record(now, event, "")
		return nil
	}
}

// startBilling spawns the billing actor; Start calls it once the dispatcher runs.
func (e *Engine) startBilling() {
	st, ok := e.store.(BillingStore)
	if !ok {
		e.cfg.Logger.Warn("billing: the store cannot bill; servers are never renewed")
		return
	}
	e.actors.Spawn(newBillingActor(billingDeps{ctx: e.ctx, cfg: e.cfg, store: st, dispatcher: e.dispatcher,
		outbox: e.outbox, feed: e.feed, metrics: e.metrics, notes: e.notes(), steps: newBillingSteps(e.cfg.Registry)}),
		billingKind, actor.WithID(billingID))
}

// opEnqueue hands an order's queued provider operation to the dispatcher, saying
// whether it took the place of a dead letter (QueueOp takes the order off the list).
func opEnqueue(before, after store.Order) enqueueOp {
	return enqueueOp{order: after, revived: before.DeadLettered && !after.DeadLettered}
}
