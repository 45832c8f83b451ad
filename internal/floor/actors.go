package main

import (
	"strconv"

	"github.com/anthdm/hollywood/actor"
)

// enqueue hands an accepted order to the dispatcher.
type enqueue struct {
	id int64
	o  order
}

// runOrder starts an order actor's one attempt; orderDone is its report.
type (
	runOrder  struct{}
	orderDone struct{ id int64 }
)

// dispatcher spawns one actor per order, with the options hangar's dispatcher uses,
// and takes their reports.
type dispatcher struct{ s *server }

func newDispatcher(s *server) actor.Producer {
	return func() actor.Receiver { return &dispatcher{s: s} }
}

func (d *dispatcher) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started, actor.Stopped:
	case enqueue:
		pid := c.Engine().Spawn(newOrderActor(d.s, c.PID(), msg), "order",
			actor.WithID(strconv.FormatInt(msg.id, 10)), actor.WithInboxSize(4), actor.WithMaxRestarts(0))
		c.Send(pid, runOrder{})
	case orderDone:
		// hangar's dispatcher frees a concurrency slot here; the floor has no cap.
	}
}

// orderActor owns one order for its one attempt.
type orderActor struct {
	s          *server
	dispatcher *actor.PID
	order      enqueue
}

func newOrderActor(s *server, dispatcher *actor.PID, o enqueue) actor.Producer {
	return func() actor.Receiver { return &orderActor{s: s, dispatcher: dispatcher, order: o} }
}

func (a *orderActor) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Started, actor.Stopped:
	case runOrder:
		a.s.complete(a.order.id, a.order.o)
		c.Send(a.dispatcher, orderDone{id: a.order.id})
		c.Engine().Poison(c.PID())
	}
}
