package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/store"
)

// runOp tells a fresh operation actor to run the order's queued provider operation
// once (the dispatcher took it off the ready queue).
type runOp struct{ op string }

// opActor runs one attempt of an order's provider operation — power off, power on or
// delete, queued by billing — and records the outcome on the order before telling
// the dispatcher: done, a retry at its due time, or the dead letter list, exactly as
// an order actor does for a create.
type opActor struct {
	d  orderDeps
	id int64
}

func newOpActor(d orderDeps, id int64) actor.Producer {
	return func() actor.Receiver { return &opActor{d: d, id: id} }
}

func (a *opActor) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started, actor.Stopped:
	case runOp:
		reported := false
		defer a.d.guardAttempt(c, "op", func() {
			if !reported {
				// Recording the failure that a panic became panicked too: the
				// operation stays queued on the order and is tried again.
				now := a.d.cfg.Clock.Now()
				c.Send(a.d.dispatcher, attemptFinished{id: a.id, outcome: outcomeRetry, order: store.Order{ID: a.id,
					Status: store.OrderActive, Billing: store.Billing{Op: msg.op, OpDue: now.Add(a.d.cfg.Queue.Retry.Base)}}})
			}
		})
		res := a.attempt(c, msg.op)
		reported = true
		c.Send(a.d.dispatcher, res)
		c.Engine().Poison(c.PID())
	}
}

// attempt never panics out: a panic becomes a failed attempt, retried like any other.
func (a *opActor) attempt(c *actor.Context, op string) (res attemptFinished) {
	defer func() {
		if v := recover(); v != nil {
			a.d.metrics.panics.WithLabelValues("op").Inc()
			res = a.record(c, op, fmt.Errorf("internal error during %s: %v", op, v))
		}
	}()
	o, err := a.d.store.GetOrder(a.id)
	if err != nil {
		return a.storeTrouble(store.Order{ID: a.id, Status: store.OrderActive, Billing: store.Billing{Op: op}}, err)
	}
	if o.Op == "" {
		return attemptFinished{id: a.id, outcome: outcomeSkipped, order: o}
	}
	if o.Op != op {
		// Replaced meanwhile (a top-up turned a power off into a power on): the new
		// operation is queued by whoever replaced it, or by the retry below.
		return attemptFinished{id: a.id, outcome: outcomeRetry, order: o}
	}
	return a.record(c, op, a.call(o, op))
}

// call asks the provider; a provider without a power switch cannot suspend, which no
// retry fixes.
func (a *opActor) call(o store.Order, op string) error {
	prov, ok := a.d.providers[o.Provider]
	if !ok {
		return &planError{fmt.Sprintf("provider %q is not configured", o.Provider)}
	}
	if o.InstanceID == "" {
		return &planError{"the order has no server"}
	}
	ctx, cancel := context.WithTimeout(a.d.ctx, a.d.cfg.Queue.ProvisionTimeout)
	defer cancel()
	if op == store.OpDelete {
		return prov.Delete(ctx, o.InstanceID)
	}
	sw, ok := prov.(cloud.PowerSwitch)
	if !ok {
		return &planError{fmt.Sprintf("provider %q cannot power servers off and on", o.Provider)}
	}
	if op == store.OpPowerOff {
		return sw.PowerOff(ctx, o.InstanceID)
	}
	return sw.PowerOn(ctx, o.InstanceID)
}

// record writes what the attempt came to. The operation is cleared only if it is
// still the order's: one that replaced it meanwhile stays queued and is handed back
// to the dispatcher as a retry due now.
func (a *opActor) record(c *actor.Context, op string, cause error) attemptFinished {
	now := a.d.cfg.Clock.Now()
	if cause != nil && a.d.ctx.Err() != nil {
		// Shutting down: the operation stays queued and runs again at the next start.
		return attemptFinished{id: a.id, outcome: outcomeInterrupted}
	}
	var perm *planError
	permanent := errors.As(cause, &perm) || cloud.IsPermanent(cause)
	var (
		outcome, event string
		done           store.Order
		queued         []store.OutboxMessage
		current        store.Order
		err            error
	)
	// The notes are chosen from the order as read; a change between the read and the
	// commit (billing replacing the operation) is read again, so that what is told
	// is what the commit did.
	for range 3 {
		if current, err = a.d.store.GetOrder(a.id); err != nil {
			break
		}
		done, queued, err = a.d.store.UpdateOrderNotify(a.id, a.outcome(op, cause, permanent, now, current, &outcome, &event),
			a.opNotes(current, op, cause, permanent)...)
		if !errors.Is(err, errStaleRead) {
			break
		}
	}
	if err != nil {
		if current.Op == "" {
			current.ID, current.Status, current.Op, current.OpDue = a.id, store.OrderActive, op, now
		}
		return a.storeTrouble(current, err)
	}
	if len(queued) > 0 {
		c.Send(a.d.outbox(), queuedMessages{msgs: queued})
	}
	if outcome == outcomeDeadLettered {
		a.d.cfg.Logger.Warn("provider operation dead-lettered", "order", a.id, "op", op, "err", cause)
	}
	a.d.feed.publish(c, func() Event { return orderFeedEvent(done, event, now) })
	return attemptFinished{id: a.id, outcome: outcome, order: done}
}

var errStaleRead = errors.New("the order changed since it was read")

// resumedLast says the order's latest billing step was a resume: a renewal paid while
// it was suspended, whose power on has not yet succeeded.
func resumedLast(o *store.Order) bool {
	for i := len(o.History) - 1; i >= 0; i-- {
		switch o.History[i].Event {
		case "resumed":
			return true
		case "renewed", "power_on_done", "succeeded", "suspended":
			return false
		}
	}
	return false
}

// serverGone says a power call found no server: the provider answered 404. (A delete
// answered 404 is a delete done, which the providers report as success.)
func serverGone(op string, cause error) bool {
	return op != store.OpDelete && cloud.IsNotFound(cause)
}

// outcome is the change recording the attempt on the order read as seen.
func (a *opActor) outcome(op string, cause error, permanent bool, now time.Time, seen store.Order, outcome, event *string) func(o *store.Order) error {
	return func(o *store.Order) error {
		*outcome, *event = outcomeSucceeded, op+"_done"
		if o.Status != store.OrderActive && o.Status != store.OrderSuspended {
			return errSkip
		}
		if o.Op != seen.Op || o.OpAttempts != seen.OpAttempts || o.Status != seen.Status {
			return errStaleRead
		}
		if o.Op != op {
			if cause == nil {
				o.PoweredOff = op == store.OpPowerOff
			}
			*outcome = outcomeRetry
			return nil
		}
		switch {
		case cause == nil:
			o.Op, o.OpAttempts, o.OpDue, o.LastError = "", 0, time.Time{}, ""
			switch op {
			case store.OpPowerOff:
				o.PoweredOff = true
			case store.OpPowerOn:
				o.PoweredOff = false
			case store.OpDelete:
				o.Status = store.OrderTerminated
				*event = "terminated"
			}
		case serverGone(op, cause):
			// Deleted at the provider (from its console, by its abuse desk): nothing is
			// left to power on or off, nor to bill. Dead-lettered, the order stayed and
			// was renewed, every period, for a server that did not exist.
			o.Op, o.OpAttempts, o.OpDue, o.LastError = "", 0, time.Time{}, cause.Error()
			o.Status = store.OrderTerminated
			*event = "server_gone"
			if op == store.OpPowerOn && resumedLast(o) {
				// The top-up's renewal paid for a period the server never ran: given
				// back in this commit (store.Billing.RefundedPeriod).
				o.RefundedPeriod = o.Period
			}
		case !permanent && o.OpAttempts < a.d.cfg.Queue.MaxRetries:
			o.OpAttempts++
			o.OpDue = retryAt(now, a.d.cfg.Queue.Retry, o.OpAttempts, cause)
			o.LastError = cause.Error()
			*outcome, *event = outcomeRetry, op+"_retry_scheduled"
		default:
			o.OpAttempts++
			o.DeadLettered = true
			o.LastError = cause.Error()
			*outcome, *event = outcomeDeadLettered, op+"_dead_lettered"
		}
		o.Record(now, *event, o.LastError)
		return nil
	}
}

// opNotes are the messages an outcome sends, decided from the order as read before
// the commit: the commit's own check keeps them from going out for a stale one.
func (a *opActor) opNotes(o store.Order, op string, cause error, permanent bool) []store.OutboxMessage {
	if o.Op != op {
		return nil
	}
	switch {
	case cause == nil && op == store.OpDelete:
		return a.d.notes.billingTerminated(o)
	case cause == nil:
		return nil
	case serverGone(op, cause):
		return a.d.notes.serverGone(o)
	case !permanent && o.OpAttempts < a.d.cfg.Queue.MaxRetries:
		return nil
	}
	o.LastError = cause.Error()
	return a.d.notes.opDeadLettered(o, op)
}

// storeTrouble leaves the operation queued in the store, to be tried again.
func (a *opActor) storeTrouble(o store.Order, err error) attemptFinished {
	if errors.Is(err, errSkip) {
		return attemptFinished{id: a.id, outcome: outcomeSkipped, order: o}
	}
	a.d.cfg.Logger.Error("op: could not record the outcome; will retry", "order", a.id, "err", err)
	o.OpDue = a.d.cfg.Clock.Now().Add(a.d.cfg.Queue.Retry.Base)
	return attemptFinished{id: a.id, outcome: outcomeRetry, order: o}
}
