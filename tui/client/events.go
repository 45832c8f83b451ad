package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hangarhq/hangar/http/api"
)

// Events follows GET /admin/events until ctx ends, reconnecting with exponential
// backoff whenever the stream fails or goes silent. Besides the daemon's events the
// channel carries EventConn items reporting each loss and recovery of the stream. The
// channel is bounded: when the console falls behind, events are dropped and counted
// in an EventDropped item, exactly as the daemon does for its own subscribers, since
// the next snapshot repairs the picture anyway. It is closed when ctx ends.
func (c *Client) Events(ctx context.Context) (<-chan api.Event, error) {
	out := make(chan api.Event, c.buffer)
	f := &feed{c: c, out: out}
	go f.run(ctx)
	return out, nil
}

type feed struct {
	c       *Client
	out     chan api.Event
	dropped int
}

func (f *feed) run(ctx context.Context) {
	defer close(f.out)
	backoff := f.c.minBackoff
	for {
		connected, err := f.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff = f.c.minBackoff
		}
		if err == nil {
			err = errors.New("event stream ended")
		}
		f.emit(api.Event{Type: api.EventConn, Conn: &api.ConnState{Err: err.Error(), RetryAt: f.c.now().Add(backoff)}})
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, f.c.maxBackoff)
	}
}

// emit never blocks: the feed must keep reading the socket whatever the console does.
func (f *feed) emit(ev api.Event) {
	if f.dropped > 0 {
		select {
		case f.out <- api.Event{Type: api.EventDropped, Dropped: f.dropped}:
			f.dropped = 0
		default:
			f.dropped++
			return
		}
	}
	select {
	case f.out <- ev:
	default:
		f.dropped++
	}
}

// stream runs one connection; connected reports whether the daemon accepted it, which
// resets the backoff.
func (f *feed) stream(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := f.c.newRequest(ctx, http.MethodGet, "/admin/events", nil, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := f.c.hc.Do(req)
	if err != nil {
		return false, stripURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return false, statusError(resp.StatusCode, body)
	}
	f.emit(api.Event{Type: api.EventConn, Conn: &api.ConnState{Connected: true}})

	// A half-open TCP connection never errors on read; the watchdog turns silence
	// longer than the idle timeout into a reconnect.
	var idle sync.Mutex
	var silent bool
	watchdog := time.AfterFunc(f.c.idleTimeout, func() {
		idle.Lock()
		silent = true
		idle.Unlock()
		cancel()
	})
	defer watchdog.Stop()

	err = parseSSE(resp.Body, func(typ, data string) {
		watchdog.Reset(f.c.idleTimeout)
		if typ == "" {
			return
		}
		if ev, ok := decodeEvent(typ, data); ok {
			f.emit(ev)
		}
	}, func() { watchdog.Reset(f.c.idleTimeout) })
	idle.Lock()
	defer idle.Unlock()
	if silent {
		return true, fmt.Errorf("event stream silent for %s", f.c.idleTimeout)
	}
	return true, err
}

// parseSSE reads a text/event-stream body, calling dispatch for each complete event
// and alive for every line, comments (the daemon's pings) included.
func parseSSE(r io.Reader, dispatch func(typ, data string), alive func()) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var typ string
	var data strings.Builder
	hasData := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		alive()
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if hasData {
				dispatch(typ, data.String())
			}
			typ, hasData = "", false
			data.Reset()
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				typ = value
			case "data":
				if hasData {
					data.WriteByte('\n')
				}
				data.WriteString(value)
				hasData = true
			}
		}
	}
}

func decodeEvent(typ, data string) (api.Event, bool) {
	ev := api.Event{Type: typ}
	var err error
	switch typ {
	case api.EventSnapshot:
		ev.Snapshot = new(api.QueueStats)
		err = json.Unmarshal([]byte(data), ev.Snapshot)
	case api.EventOrder:
		ev.Order = new(api.OrderEvent)
		err = json.Unmarshal([]byte(data), ev.Order)
	case api.EventMessage:
		ev.Message = new(api.Message)
		err = json.Unmarshal([]byte(data), ev.Message)
	case api.EventRateLimit:
		ev.RateLimit = new(api.RateLimitEvent)
		err = json.Unmarshal([]byte(data), ev.RateLimit)
	case api.EventBroadcast:
		ev.Broadcast = new(api.Broadcast)
		err = json.Unmarshal([]byte(data), ev.Broadcast)
	case api.EventDropped:
		var d struct {
			Count int `json:"count"`
		}
		err = json.Unmarshal([]byte(data), &d)
		ev.Dropped = d.Count
	default:
		// Newer daemons may add event types; an older console ignores them.
		return ev, false
	}
	return ev, err == nil
}
