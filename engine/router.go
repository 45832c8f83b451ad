package engine

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Messages the update router understands.
type (
	// deliverUpdate carries an acknowledged update to its user's actor.
	deliverUpdate struct {
		header     UpdateHeader
		raw        []byte
		acceptedAt time.Time
	}
	// recoverInbox re-delivers every update left in the inbox; answered with recoverInboxResult.
	recoverInbox       struct{}
	recoverInboxResult struct {
		n   int
		err error
	}
	// resetWindow clears one user's window; answered with resetWindowResult.
	resetWindow struct {
		userID  int64
		replyTo *actor.PID
	}
	resetWindowResult struct {
		existed bool
		err     error
	}
	healthProbe struct{}
	// userDone is sent by a user actor after each update it finished.
	userDone struct{ userID int64 }
	// routerTick drives idle eviction and the stale-inbox sweep.
	routerTick struct{}
)

type routerDeps struct {
	pending    *atomic.Int64
	sendingOff bool
	cfg        Config
	store      UpdateStore
	bot        *bot
	metrics    *metrics
	outbox     func() *actor.PID
	dispatcher *actor.PID
	feed       *actor.PID
}

// userEntry is the router's view of one live user actor.
type userEntry struct {
	pid         *actor.PID
	outstanding int
	lastActive  time.Time
}

// updateRouter owns the set of live per-user actors: it spawns one on a user's first
// update, counts what each still has to process, and stops those idle for longer than
// IdleTimeout. Only it sends to user actors, so a stopping actor never receives work.
type updateRouter struct {
	d        routerDeps
	users    map[int64]*userEntry
	gen      uint64
	repeater actor.SendRepeater
	ticking  bool
}

func newUpdateRouter(d routerDeps) actor.Producer {
	return func() actor.Receiver { return &updateRouter{d: d, users: map[int64]*userEntry{}} }
}

func (r *updateRouter) Receive(c *actor.Context) {
	defer recoverPanic(r.d.cfg.Logger, r.d.metrics, "router", nil)
	switch msg := c.Message().(type) {
	case actor.Started:
		r.repeater = c.SendRepeat(c.PID(), routerTick{}, r.tickEvery())
		r.ticking = true
	case actor.Stopped:
		if r.ticking {
			r.repeater.Stop()
		}
	case deliverUpdate:
		r.route(c, msg)
	case userDone:
		r.d.pending.Add(-1)
		if u, ok := r.users[msg.userID]; ok {
			u.outstanding--
		}
	case recoverInbox:
		n, err := r.redeliver(c, time.Time{})
		if n > 0 {
			r.d.metrics.updatesRecovered.Add(float64(n))
			r.d.cfg.Logger.Info("re-delivering updates acknowledged before the last stop", "count", n)
		}
		c.Respond(recoverInboxResult{n: n, err: err})
	case resetWindow:
		r.resetWindow(c, msg)
	case healthProbe:
		c.Respond(Health{UserActors: len(r.users)})
	case routerTick:
		r.evictIdle(c)
		// An update whose actor panicked mid-way is still in the inbox: try it again.
		// Only when nothing is waiting in a mailbox: under a backlog an old inbox entry
		// is most likely queued, not lost, and sending it again would only add load.
		if r.d.pending.Load() == 0 {
			if _, err := r.redeliver(c, r.d.cfg.Clock.Now().Add(-2*time.Minute)); err != nil {
				r.d.cfg.Logger.Warn("inbox sweep failed", "err", err)
			}
		}
	}
}

func (r *updateRouter) tickEvery() time.Duration {
	if t := r.d.cfg.IdleTimeout / 2; t < 30*time.Second {
		return t
	}
	return 30 * time.Second
}

func (r *updateRouter) route(c *actor.Context, msg deliverUpdate) {
	userID := msg.header.UserID
	u, ok := r.users[userID]
	if !ok {
		r.gen++
		id := strconv.FormatInt(userID, 10) + "." + strconv.FormatUint(r.gen, 10)
		pid := c.SpawnChild(newUserActor(userDeps{
			cfg: r.d.cfg, store: r.d.store, bot: r.d.bot, metrics: r.d.metrics, outbox: r.d.outbox(), router: c.PID(),
			dispatcher: r.d.dispatcher, feed: r.d.feed, sendingOff: r.d.sendingOff,
		}, userID), "user", actor.WithID(id), actor.WithInboxSize(16))
		u = &userEntry{pid: pid}
		r.users[userID] = u
		r.d.metrics.userActors.Set(float64(len(r.users)))
	}
	u.outstanding++
	u.lastActive = r.d.cfg.Clock.Now()
	c.Send(u.pid, userUpdate{id: msg.header.ID, update: msg.header.update, raw: msg.raw, acceptedAt: msg.acceptedAt})
}

// redeliver routes inbox entries received before olderThan (all, when zero).
func (r *updateRouter) redeliver(c *actor.Context, olderThan time.Time) (int, error) {
	pending, err := r.d.store.PendingUpdates(1 << 20)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pending {
		if !olderThan.IsZero() && p.ReceivedAt.After(olderThan) {
			continue
		}
		// The webhook validated the body before accepting it; one that no longer
		// parses is routed as anonymous so that it still leaves the inbox.
		h, _ := ParseUpdateHeader(p.Body)
		h.ID = p.UpdateID
		r.d.pending.Add(1)
		r.route(c, deliverUpdate{header: h, raw: p.Body, acceptedAt: p.ReceivedAt})
		n++
	}
	return n, nil
}

func (r *updateRouter) evictIdle(c *actor.Context) {
	cutoff := r.d.cfg.Clock.Now().Add(-r.d.cfg.IdleTimeout)
	for id, u := range r.users {
		if u.outstanding <= 0 && u.lastActive.Before(cutoff) {
			c.Engine().Poison(u.pid)
			delete(r.users, id)
		}
	}
	r.d.metrics.userActors.Set(float64(len(r.users)))
}

func (r *updateRouter) resetWindow(c *actor.Context, msg resetWindow) {
	if u, ok := r.users[msg.userID]; ok {
		// The actor owns the window: let it clear memory and store in its own order.
		c.Send(u.pid, resetWindow{userID: msg.userID, replyTo: c.Sender()})
		return
	}
	existed, err := r.d.store.ResetWindow(msg.userID)
	c.Respond(resetWindowResult{existed: existed, err: err})
}
