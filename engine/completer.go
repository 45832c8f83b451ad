package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/store"
)

// Messages the completer understands.
type (
	// completeAttempt is an attempt whose server is ready: the order becomes active,
	// its hold is captured and the user's message queued, in the completer's next commit.
	completeAttempt struct {
		order store.Order // as its attempt started
		inst  cloud.Instance
		msg   store.OutboxMessage
		// secret is the root password a provider chose, in memory only: its message is
		// sent without being stored (sendTransient) once the order is active.
		secret string
	}
	// completeKick commits the batch after the messages already in the inbox.
	completeKick struct{}
)

// completer records the order actors' successful attempts, all those that arrived
// since its last commit in one commit (store.UpdateOrders), the way the dispatcher
// starts them: one commit and one wait for many orders' active records, captures and
// messages instead of a commit per order. Each order stays in flight in the dispatcher
// until the completer reports it, so it is neither cancelled nor started again meanwhile,
// and a shutdown waits for its commit. A kill before the commit leaves the orders
// provisioning, to be resumed and found by label; after it, active and captured once.
type completer struct {
	d      orderDeps
	batch  []*completeAttempt
	kicked bool
}

func newCompleter(d orderDeps) actor.Producer {
	return func() actor.Receiver { return &completer{d: d} }
}

func (k *completer) Receive(c *actor.Context) {
	defer recoverPanic(k.d.cfg.Logger, k.d.metrics, "completer", nil)
	switch msg := c.Message().(type) {
	case actor.Started, actor.Stopped:
	case *completeAttempt:
		k.batch = append(k.batch, msg)
		if !k.kicked {
			k.kicked = true
			c.Send(c.PID(), completeKick{})
		}
	case completeKick:
		k.kicked = false
		batch := k.batch
		k.batch = nil
		k.complete(c, batch)
	}
}

// complete commits the batch and tells everyone of each order's outcome. A commit the
// store refuses is tried again order by order, so that what one order's change
// broke (its money, its indexes) fails only that order; an order still not recorded
// is retried, and its next attempt finds the server by label.
func (k *completer) complete(c *actor.Context, batch []*completeAttempt) {
	now := k.d.cfg.Clock.Now()
	results, err := k.commit(batch, now)
	if err != nil && len(batch) > 1 {
		k.d.cfg.Logger.Warn("order: a batch of completions was refused; recording them one by one", "orders", len(batch), "err", err)
		results = make([]store.OrderResult, len(batch))
		for i := range batch {
			one, err := k.commit(batch[i:i+1], now)
			if err != nil {
				results[i].Err = err
				continue
			}
			results[i] = one[0]
		}
	} else if err != nil {
		results = []store.OrderResult{{Err: err}}
	}
	var queued []store.OutboxMessage
	for i, r := range results {
		done := batch[i]
		id := done.order.ID
		switch {
		case errors.Is(r.Err, errSkip):
			c.Send(k.d.dispatcher, attemptFinished{id: id, outcome: outcomeSkipped, order: done.order})
			continue
		case r.Err != nil:
			// The server exists; the next attempt finds it by label and finishes the job.
			k.d.cfg.Logger.Error("order: could not record success; will retry", "order", id, "err", r.Err)
			o := done.order
			o.DueAt = now.Add(k.d.cfg.Queue.Retry.Base)
			c.Send(k.d.dispatcher, attemptFinished{id: id, outcome: outcomeRetry, order: o})
			continue
		}
		if done.secret != "" {
			c.Send(k.d.outbox(), sendTransient{msg: done.msg, secret: done.secret, orderID: id})
		} else {
			queued = append(queued, r.Notes...)
		}
		k.d.feed.publish(c, func() Event { return orderFeedEvent(r.Order, "succeeded", now) })
		if k.d.billing != nil {
			if pid := k.d.billing(); pid != nil {
				c.Send(pid, watchOrder{order: &results[i].Order})
			}
		}
		c.Send(k.d.dispatcher, attemptFinished{id: id, outcome: outcomeSucceeded, order: r.Order})
	}
	if len(queued) > 0 {
		c.Send(k.d.outbox(), queuedMessages{msgs: queued})
	}
}

// commit records the batch's orders as active in one commit. A panic in the store
// becomes the commit's error, so that the orders are retried instead of being left in
// flight for good.
func (k *completer) commit(batch []*completeAttempt, now time.Time) (results []store.OrderResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			k.d.metrics.panics.WithLabelValues("order").Inc()
			results, err = nil, fmt.Errorf("internal error while recording success: %v", v)
		}
	}()
	changes := make([]store.OrderChange, len(batch))
	for i, done := range batch {
		changes[i] = store.OrderChange{ID: done.order.ID, Apply: activate(done.inst, now, k.d.cfg.Billing.Period)}
		if done.secret == "" {
			changes[i].Notes = []store.OutboxMessage{done.msg}
		}
	}
	return k.d.store.UpdateOrders(changes)
}

// activate is the change that records a ready server: the order becomes active, and
// the hold captured in the same commit (store.saveOrder) pays its first period.
func activate(inst cloud.Instance, now time.Time, period time.Duration) func(o *store.Order) error {
	return func(o *store.Order) error {
		if o.Status != store.OrderProvisioning {
			return errSkip
		}
		o.Status = store.OrderActive
		o.IPAddress, o.InstanceID = inst.IPv4, inst.ID
		o.LastError = ""
		if o.Period == 0 {
			o.Period, o.PaidUntil = 1, now.Add(period)
		}
		o.Record(now, "succeeded", "")
		return nil
	}
}
