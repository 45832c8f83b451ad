package engine

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Messages the update router understands.
type (
	// deliverUpdate carries an update to its user's actor, spawning the actor if it is
	// not live.
	deliverUpdate struct {
		userID int64
		update *userUpdate
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
	// routerTick drives idle eviction and the stale-inbox sweep.
	routerTick struct{}
)

type routerDeps struct {
	// userShared is also what the router's user actors are given.
	*userShared
	users *userDirectory
}

// userEntry is one live user actor.
type userEntry struct {
	pid *actor.PID
	// outstanding counts the updates sent to the actor and not yet processed: counted
	// up under the shard's lock by whoever sends, down by the actor.
	outstanding atomic.Int64
	lastActive  time.Time // under the shard's lock
}

// userDirectory is the set of live user actors. The router alone adds and removes
// entries; the webhook's handlers read it to send an update to a live actor directly,
// saving a hop through the router on the way to the acknowledgement. A sender counts
// its update in the entry's outstanding under the shard's lock and the router removes
// only entries with nothing outstanding under the same lock, so nothing is ever sent
// to an actor being stopped.
type userDirectory struct {
	shards [64]userShard
}

type userShard struct {
	mu    sync.Mutex
	users map[int64]*userEntry
}

func newUserDirectory() *userDirectory {
	d := &userDirectory{}
	for i := range d.shards {
		d.shards[i].users = map[int64]*userEntry{}
	}
	return d
}

func (d *userDirectory) shard(userID int64) *userShard {
	return &d.shards[uint64(userID)%uint64(len(d.shards))]
}

// acquire returns the live actor of userID with one more update counted against it,
// or false when there is none (the router spawns it).
func (d *userDirectory) acquire(userID int64, now time.Time) (*actor.PID, bool) {
	sh := d.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u, ok := sh.users[userID]
	if !ok {
		return nil, false
	}
	u.outstanding.Add(1)
	u.lastActive = now
	return u.pid, true
}

func (d *userDirectory) add(userID int64, u *userEntry) {
	sh := d.shard(userID)
	sh.mu.Lock()
	sh.users[userID] = u
	sh.mu.Unlock()
}

func (d *userDirectory) lookup(userID int64) (*actor.PID, bool) {
	sh := d.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u, ok := sh.users[userID]
	if !ok {
		return nil, false
	}
	return u.pid, true
}

// evict removes the entries idle since before cutoff with nothing outstanding and
// returns their actors, and how many stay.
func (d *userDirectory) evict(cutoff time.Time) (stopped []*actor.PID, live int) {
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		for id, u := range sh.users {
			if u.outstanding.Load() <= 0 && u.lastActive.Before(cutoff) {
				stopped = append(stopped, u.pid)
				delete(sh.users, id)
			}
		}
		live += len(sh.users)
		sh.mu.Unlock()
	}
	return stopped, live
}

func (d *userDirectory) len() int {
	n := 0
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		n += len(sh.users)
		sh.mu.Unlock()
	}
	return n
}

// updateRouter spawns a user's actor on the first update that finds none live (in
// the directory), stops those idle for longer than IdleTimeout, re-delivers the inbox
// at start and sweeps it for updates whose processing failed.
type updateRouter struct {
	d        routerDeps
	gen      uint64
	repeater actor.SendRepeater
	ticking  bool
}

func newUpdateRouter(d routerDeps) actor.Producer {
	return func() actor.Receiver { return &updateRouter{d: d} }
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
		c.Respond(Health{UserActors: r.d.users.len()})
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
	now := r.d.cfg.Clock.Now()
	if pid, ok := r.d.users.acquire(msg.userID, now); ok {
		c.Send(pid, msg.update)
		return
	}
	r.gen++
	id := strconv.FormatInt(msg.userID, 10) + "." + strconv.FormatUint(r.gen, 10)
	u := &userEntry{lastActive: now}
	u.outstanding.Store(1)
	// A small inbox: Hollywood's ring doubles when full, and a user seldom has more
	// than a few updates waiting, while every idle actor keeps its ring (16 slots were
	// a quarter of a live user actor's memory).
	u.pid = c.SpawnChild(newUserActor(userDeps{userShared: r.d.userShared, entry: u}, msg.userID),
		"user", actor.WithID(id), actor.WithInboxSize(4))
	// Sent before the entry is published, so that an update a handler sends directly
	// once it finds the entry comes after this one.
	c.Send(u.pid, msg.update)
	r.d.users.add(msg.userID, u)
	r.d.metrics.userActors.Inc()
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
		r.d.pending.Add(1)
		r.route(c, deliverUpdate{userID: h.UserID, update: &userUpdate{id: p.UpdateID, update: h.update, raw: p.Body, acceptedAt: p.ReceivedAt}})
		n++
	}
	return n, nil
}

func (r *updateRouter) evictIdle(c *actor.Context) {
	stopped, live := r.d.users.evict(r.d.cfg.Clock.Now().Add(-r.d.cfg.IdleTimeout))
	for _, pid := range stopped {
		c.Engine().Poison(pid)
	}
	r.d.metrics.userActors.Set(float64(live))
}

func (r *updateRouter) resetWindow(c *actor.Context, msg resetWindow) {
	if pid, ok := r.d.users.lookup(msg.userID); ok {
		// The actor owns the window: let it clear memory and store in its own order.
		// Only the router stops actors, so this one is still live when it gets this.
		c.Send(pid, resetWindow{userID: msg.userID, replyTo: c.Sender()})
		return
	}
	existed, err := r.d.store.ResetWindow(msg.userID)
	c.Respond(resetWindowResult{existed: existed, err: err})
}
