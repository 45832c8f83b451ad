package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/store"
)

// terminateOrder asks the dispatcher to delete an active order's server. userID, when
// set, must own the order (the chat command); replyTo, when set, gets an orderOpResult
// (the admin API).
type terminateOrder struct {
	id      int64
	userID  int64
	replyTo *actor.PID
}

// runTerminate tells a fresh terminator to do its one job.
type runTerminate struct{ req terminateOrder }

// terminator deletes one server at its provider and marks the order terminated. It is
// an actor of its own because the provider call takes seconds and must not hold up the
// dispatcher or the user's chat.
type terminator struct {
	d orderDeps
}

func newTerminator(d orderDeps) actor.Producer {
	return func() actor.Receiver { return &terminator{d: d} }
}

func (t *terminator) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started, actor.Stopped:
	case runTerminate:
		res := t.run(c, msg.req)
		if msg.req.replyTo != nil {
			c.Send(msg.req.replyTo, res)
		}
		c.Engine().Poison(c.PID())
	}
}

func (t *terminator) run(c *actor.Context, req terminateOrder) (res orderOpResult) {
	defer func() {
		if v := recover(); v != nil {
			t.d.metrics.panics.WithLabelValues("terminator").Inc()
			res = orderOpResult{err: fmt.Errorf("internal error while terminating: %v", v)}
		}
	}()
	o, err := t.d.store.GetOrder(req.id)
	if err != nil {
		return orderOpResult{err: err}
	}
	if req.userID != 0 && o.TelegramUserID != req.userID {
		return orderOpResult{err: store.ErrNotFound}
	}
	if o.Status == store.OrderSuspended {
		return t.queueDelete(c, o)
	}
	if o.Status != store.OrderActive {
		return orderOpResult{err: fmt.Errorf("%w: order %d is %s", ErrOrderState, o.ID, o.Status)}
	}
	prov, ok := t.d.providers[o.Provider]
	if !ok {
		return orderOpResult{err: fmt.Errorf("provider %q is not configured", o.Provider)}
	}
	// Recorded before the provider is asked: from here billing neither renews nor
	// suspends the order (a renewal would charge for a server being deleted, a
	// suspension would leave finishTermination nothing it may end), and a crash
	// during the call leaves the termination to the reconciler instead of forgetting it.
	if o, err = t.d.store.UpdateOrder(o.ID, func(o *store.Order) error {
		if o.Status != store.OrderActive {
			return fmt.Errorf("%w: order %d is %s", ErrOrderState, o.ID, o.Status)
		}
		if !o.Terminating {
			o.Terminating = true
			o.Record(t.d.cfg.Clock.Now(), "terminate_requested", "")
		}
		return nil
	}); err != nil {
		return orderOpResult{err: err}
	}
	ctx, cancel := context.WithTimeout(t.d.ctx, t.d.cfg.Queue.ProvisionTimeout)
	defer cancel()
	if err := prov.Delete(ctx, o.InstanceID); err != nil {
		t.d.cfg.Logger.Warn("terminate: provider refused; the reconciler retries until it confirms", "order", o.ID, "err", err)
		// Recorded, so the retries outlive a restart: the server must not keep costing
		// money because one call failed.
		now := t.d.cfg.Clock.Now()
		_, werr := t.d.store.UpdateOrder(o.ID, func(o *store.Order) error {
			if o.Status != store.OrderActive {
				return ErrOrderState
			}
			o.Terminating = true
			o.Record(now, "terminate_failed", err.Error())
			return nil
		})
		if werr == nil {
			tellReconciler(c, retryTermination{id: o.ID})
		}
		c.Send(t.d.outbox(), sendTransient{msg: t.d.notes.terminateFailed(o)})
		return orderOpResult{err: fmt.Errorf("provider: %w", err)}
	}
	now := t.d.cfg.Clock.Now()
	done, err := finishTermination(t.d.store, now, o, t.d.notes.terminated(o))
	if err != nil && !errors.Is(err, ErrOrderState) {
		return orderOpResult{err: err}
	}
	c.Send(t.d.outbox(), pokeOutbox{})
	t.d.feed.publish(c, func() Event { return orderFeedEvent(done, "terminated", now) })
	return orderOpResult{order: done, err: err}
}

// queueDelete ends a suspended server the way billing does at the end of its grace:
// the delete waits in the queue behind any power call of the order, and the order
// is terminated once the provider confirms.
func (t *terminator) queueDelete(c *actor.Context, o store.Order) orderOpResult {
	now := t.d.cfg.Clock.Now()
	done, err := t.d.store.UpdateOrder(o.ID, func(o *store.Order) error {
		if o.Status != store.OrderSuspended {
			return ErrOrderState
		}
		if o.Op != store.OpDelete {
			o.QueueOp(store.OpDelete, now)
			o.Record(now, "terminate_requested", "")
		}
		return nil
	})
	if err != nil {
		return orderOpResult{err: err}
	}
	c.Send(t.d.dispatcher, opEnqueue(o, done))
	return orderOpResult{order: done}
}
