package http

import (
	"bufio"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/store"
)

// eventBuffer bounds what one console may lag behind before it starts losing events
// (it is told how many with a "dropped" event; snapshots keep it right).
const eventBuffer = 1024

// events streams the engine's live feed as Server-Sent Events (GET /admin/events).
func (s *Server) events(c *fiber.Ctx) error {
	ch, cancel, err := s.deps.Orders.Subscribe(eventBuffer)
	if err != nil {
		return err
	}
	if st, err := s.deps.Orders.QueueStats(); err == nil {
		// The first event is the current state, so a console is right at once.
		first, _ := json.Marshal(st)
		c.Locals("first", first)
	}
	first, _ := c.Locals("first").([]byte)
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	c.Set("X-Accel-Buffering", "no")
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		defer cancel()
		if first != nil {
			fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", first)
			if w.Flush() != nil {
				return
			}
		}
		ping := time.NewTicker(15 * time.Second)
		defer ping.Stop()
		for {
			select {
			case ev, ok := <-ch:
				if !ok {
					return
				}
				data, err := json.Marshal(eventData(ev))
				if err != nil {
					continue
				}
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data)
				// Write whatever else is already waiting before flushing once.
				for n := len(ch); n > 0; n-- {
					ev, ok := <-ch
					if !ok {
						break
					}
					if data, err := json.Marshal(eventData(ev)); err == nil {
						fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data)
					}
				}
				if w.Flush() != nil {
					return // the client went away
				}
			case <-s.closing:
				// Shutting down: end the stream so Fiber's shutdown need not wait for
				// a console that would keep it open forever (it reconnects).
				return
			case <-ping.C:
				fmt.Fprint(w, ": ping\n\n")
				if w.Flush() != nil {
					return
				}
			}
		}
	}))
	return nil
}

// eventData is what an event's data line carries: an outbox message as GET
// /admin/outbox shows it (secrets masked, buttons decoded), so that a console replacing
// a listed message with its event keeps the buttons.
func eventData(ev engine.Event) any {
	if m, ok := ev.Data.(store.OutboxMessage); ok {
		return viewMessages([]store.OutboxMessage{m})[0]
	}
	return ev.Data
}
