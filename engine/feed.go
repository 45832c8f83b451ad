package engine

import (
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Event is one item of the live feed the console subscribes to. Type is "snapshot",
// "order", "message", "ratelimit" or "dropped"; Data marshals to the JSON documented
// in docs/admin-api.md.
type Event struct {
	Type string
	Data any
}

// OrderEvent is the feed's record of one lifecycle step.
type OrderEvent struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	OrderID int64     `json:"order_id"`
	UserID  int64     `json:"user_id"`
	Status  string    `json:"status"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error,omitempty"`
}

// RateLimitEvent tells the console a user was refused.
type RateLimitEvent struct {
	At      time.Time `json:"at"`
	UserID  int64     `json:"user_id"`
	Count   int       `json:"count"`
	Limited bool      `json:"limited"`
}

// DroppedEvent tells a slow subscriber how many events it missed.
type DroppedEvent struct {
	Count int `json:"count"`
}

// feedRef is the feed hub and how many subscribers it has. Every step of every order
// and every message logged was an actor message to the hub, a hand-off to its
// goroutine, whether or not a console was watching; publishers now ask watched first
// and send nothing while nobody is. watchers is counted by Subscribe and its cancel,
// outside the hub, so that an event published after Subscribe returns is never held
// back.
type feedRef struct {
	pid      *actor.PID
	watchers atomic.Int64
}

// watched reports whether a console subscribes to the feed.
func (f *feedRef) watched() bool { return f != nil && f.watchers.Load() > 0 }

// sender is what publishes: an actor's context or the actor engine.
type sender interface {
	Send(pid *actor.PID, msg any)
}

// publish sends the hub the event build makes, while a console watches. build runs
// only then (it allocates: the event's data is boxed), so an unwatched feed costs
// publishers one atomic load.
func (f *feedRef) publish(s sender, build func() Event) {
	if f.watched() {
		s.Send(f.pid, publishEvent{ev: build()})
	}
}

// Messages the feed hub understands.
type (
	subscribeFeed struct {
		id uint64
		ch chan Event
	}
	unsubscribeFeed struct{ id uint64 }
	publishEvent    struct{ ev Event }
)

type subscriber struct {
	ch      chan Event
	dropped int
}

// feedHub fans events out to subscribers. It never blocks: a subscriber whose buffer
// is full loses events and is told how many, so a slow console cannot slow the queue.
type feedHub struct {
	subs map[uint64]*subscriber
}

func newFeedHub() actor.Producer {
	return func() actor.Receiver { return &feedHub{subs: map[uint64]*subscriber{}} }
}

func (h *feedHub) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started:
	case actor.Stopped:
		for id, s := range h.subs {
			close(s.ch)
			delete(h.subs, id)
		}
	case subscribeFeed:
		h.subs[msg.id] = &subscriber{ch: msg.ch}
	case unsubscribeFeed:
		if s, ok := h.subs[msg.id]; ok {
			close(s.ch)
			delete(h.subs, msg.id)
		}
	case publishEvent:
		h.publish(msg.ev)
	}
}

func (h *feedHub) publish(ev Event) {
	for _, s := range h.subs {
		if s.dropped > 0 {
			select {
			case s.ch <- Event{Type: "dropped", Data: DroppedEvent{Count: s.dropped}}:
				s.dropped = 0
			default:
				s.dropped++
				continue
			}
		}
		select {
		case s.ch <- ev:
		default:
			s.dropped++
		}
	}
}
