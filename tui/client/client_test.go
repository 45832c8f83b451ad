package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/client"
)

var _ tui.Daemon = (*client.Client)(nil)

const token = "s3cret-admin-token"

type seen struct {
	method, path, query string
}

// setup starts a daemon double that checks the bearer like the real admin API and
// answers each "METHOD /path" with the given JSON body.
func setup(t *testing.T, routes map[string]string) (*client.Client, *[]seen) {
	t.Helper()
	var calls []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, seen{r.Method, r.URL.Path, r.URL.RawQuery})
		w.Header().Set("Content-Type", "application/json")
		switch auth := r.Header.Get("Authorization"); {
		case auth == "":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"no bearer token","code":"unauthorized"}`)
			return
		case auth != "Bearer "+token:
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":"wrong admin token","code":"forbidden"}`)
			return
		}
		body, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"no such order","code":"not_found"}`)
			return
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	return c, &calls
}

func TestRESTCalls(t *testing.T) {
	order := `{"order_id":12,"user_id":4,"status":"failed","spec_id":"nano-1","region":"tokyo","attempts":4,"error_message":"quota","ip_address":null,"created_at":"2026-11-29T19:40:00Z","updated_at":"2026-11-29T19:41:00Z","history":[{"at":"2026-11-29T19:40:00Z","event":"enqueued","status":"pending","attempt":0}]}`
	routes := map[string]string{
		"GET /admin/queue":                `{"at":"2026-11-29T19:40:00Z","depth":12,"in_flight":5,"dead_letters":3,"lag_seconds":4.2,"alarms":{"depth":true},"thresholds":{"depth":500,"dead_letters":10,"lag_seconds":600}}`,
		"GET /admin/orders":               `{"orders":[` + order + `],"next_before":77}`,
		"GET /admin/orders/12":            order,
		"POST /admin/orders/12/cancel":    order,
		"POST /admin/orders/12/terminate": strings.Replace(order, `"status":"failed"`, `"status":"terminated"`, 1),
		"GET /admin/dlq":                  `{"dead_letters":[` + order + `]}`,
		"POST /admin/dlq/12/requeue":      order,
		"POST /admin/dlq/requeue":         `{"requeued":3}`,
		"DELETE /admin/dlq":               `{"purged":2}`,
		"GET /admin/ratelimits":           `{"limit":30,"window_seconds":60,"windows":[{"user_id":1,"count":29,"reset_at":"2026-11-29T19:41:00Z","limited":false}]}`,
		"DELETE /admin/ratelimit/7":       `{"user_id":7,"reset":true}`,
		"GET /admin/outbox":               `{"sending":true,"queued":[{"id":1,"chat_id":5,"text":"hi","status":"queued"}],"recent":[]}`,
		"GET /api/admin/stats":            `{"total_views":100,"today_views":7,"today_unique_visitors":3,"top_slugs":[{"slug":"hello","views":60}]}`,
		"GET /admin/plans":                `{"currency":"USD","plans":[{"spec_id":"sim-nano","name":"nano","provider":"sim","plan":"p","regions":["tokyo"],"price":500}]}`,
	}
	ctx := t.Context()
	tests := []struct {
		name  string
		call  func(c *client.Client) (any, error)
		want  seen
		check func(t *testing.T, v any)
	}{
		{"queue", func(c *client.Client) (any, error) { return c.Queue(ctx) },
			seen{"GET", "/admin/queue", ""},
			func(t *testing.T, v any) {
				q := v.(api.QueueStats)
				if q.Depth != 12 || q.InFlight != 5 || !q.Alarms.Depth || q.LagSeconds != 4.2 || q.Thresholds.Depth != 500 {
					t.Errorf("queue = %+v", q)
				}
			}},
		{"orders", func(c *client.Client) (any, error) { return c.Orders(ctx, "failed", 50, 90) },
			seen{"GET", "/admin/orders", "before=90&limit=50&status=failed"},
			func(t *testing.T, v any) {
				p := v.(api.OrderPage)
				if len(p.Orders) != 1 || p.NextBefore != 77 || *p.Orders[0].ErrorMessage != "quota" || p.Orders[0].IPAddress != nil {
					t.Errorf("page = %+v", p)
				}
			}},
		{"orders all", func(c *client.Client) (any, error) { return c.Orders(ctx, "", 0, 0) },
			seen{"GET", "/admin/orders", ""}, nil},
		{"order", func(c *client.Client) (any, error) { return c.Order(ctx, 12) },
			seen{"GET", "/admin/orders/12", ""},
			func(t *testing.T, v any) {
				if o := v.(api.Order); len(o.History) != 1 || o.History[0].Event != "enqueued" {
					t.Errorf("order = %+v", o)
				}
			}},
		{"cancel", func(c *client.Client) (any, error) { return c.CancelOrder(ctx, 12) },
			seen{"POST", "/admin/orders/12/cancel", ""}, nil},
		{"terminate", func(c *client.Client) (any, error) { return c.TerminateOrder(ctx, 12) },
			seen{"POST", "/admin/orders/12/terminate", ""},
			func(t *testing.T, v any) {
				if o := v.(api.Order); o.OrderID != 12 || o.Status != "terminated" {
					t.Errorf("terminated order = %+v", o)
				}
			}},
		{"dead letters", func(c *client.Client) (any, error) { return c.DeadLetters(ctx, 100) },
			seen{"GET", "/admin/dlq", "limit=100"},
			func(t *testing.T, v any) {
				if d := v.([]api.Order); len(d) != 1 || d[0].OrderID != 12 {
					t.Errorf("dlq = %+v", d)
				}
			}},
		{"requeue", func(c *client.Client) (any, error) { return c.Requeue(ctx, 12) },
			seen{"POST", "/admin/dlq/12/requeue", ""}, nil},
		{"requeue all", func(c *client.Client) (any, error) { return c.RequeueAll(ctx) },
			seen{"POST", "/admin/dlq/requeue", ""},
			func(t *testing.T, v any) {
				if v.(int) != 3 {
					t.Errorf("requeued = %v", v)
				}
			}},
		{"purge", func(c *client.Client) (any, error) { return c.PurgeDLQ(ctx) },
			seen{"DELETE", "/admin/dlq", ""},
			func(t *testing.T, v any) {
				if v.(int) != 2 {
					t.Errorf("purged = %v", v)
				}
			}},
		{"rate limits", func(c *client.Client) (any, error) { return c.RateLimits(ctx, 1) },
			seen{"GET", "/admin/ratelimits", "min=1"},
			func(t *testing.T, v any) {
				if r := v.(api.RateLimits); r.Limit != 30 || len(r.Windows) != 1 || r.Windows[0].Count != 29 {
					t.Errorf("ratelimits = %+v", r)
				}
			}},
		{"reset", func(c *client.Client) (any, error) { return c.ResetRateLimit(ctx, 7) },
			seen{"DELETE", "/admin/ratelimit/7", ""},
			func(t *testing.T, v any) {
				if !v.(bool) {
					t.Error("reset = false")
				}
			}},
		{"outbox", func(c *client.Client) (any, error) { return c.Outbox(ctx, 100) },
			seen{"GET", "/admin/outbox", "limit=100"},
			func(t *testing.T, v any) {
				if o := v.(api.Outbox); !o.Sending || len(o.Queued) != 1 {
					t.Errorf("outbox = %+v", o)
				}
			}},
		{"blog", func(c *client.Client) (any, error) { return c.BlogStats(ctx) },
			seen{"GET", "/api/admin/stats", ""},
			func(t *testing.T, v any) {
				if b := v.(api.BlogStats); b.TodayViews != 7 || b.TopSlugs[0].Slug != "hello" {
					t.Errorf("blog = %+v", b)
				}
			}},
		{"plans", func(c *client.Client) (any, error) { return c.Plans(ctx) },
			seen{"GET", "/admin/plans", ""},
			func(t *testing.T, v any) {
				if p := v.(api.Catalog); p.Currency != "USD" || len(p.Plans) != 1 || p.Plans[0].Price != 500 {
					t.Errorf("plans = %+v", p)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, calls := setup(t, routes)
			v, err := tt.call(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(*calls) != 1 || (*calls)[0] != tt.want {
				t.Fatalf("requests = %+v, want %+v", *calls, tt.want)
			}
			if tt.check != nil {
				tt.check(t, v)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	c, _ := setup(t, nil)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	unreachable, err := client.New(deadURL, token)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		err        error
		wantStatus int // 0: not reached
		wantCode   string
	}{
		{"not found", func() error { _, err := c.Order(t.Context(), 99); return err }(), 404, "not_found"},
		{"unreachable", func() error { _, err := unreachable.Queue(t.Context()); return err }(), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("no error")
			}
			var ae *api.Error
			if got := errors.As(tt.err, &ae); got != (tt.wantStatus != 0) {
				t.Fatalf("errors.As(*api.Error) = %v for %v", got, tt.err)
			}
			if ae != nil && (ae.Status != tt.wantStatus || ae.Code != tt.wantCode) {
				t.Errorf("error = %+v", ae)
			}
			if strings.Contains(tt.err.Error(), token) {
				t.Errorf("error text leaks the token: %v", tt.err)
			}
		})
	}
}

func TestWrongToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error":"wrong admin token","code":"forbidden"}`)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, "nope")
	_, err := c.Queue(t.Context())
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "forbidden" || !strings.Contains(err.Error(), "wrong admin token") {
		t.Fatalf("err = %v", err)
	}
}

// sseServer streams the given events on each connection, then drops it; connection n
// gets batches[n] (the last batch repeats).
func sseServer(t *testing.T, batches [][]string, hold bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/admin/events" || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"error":"no","code":"forbidden"}`, http.StatusForbidden)
			return
		}
		n := int(conns.Add(1)) - 1
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fmt.Fprint(w, ": ping\n\n")
		for _, ev := range batches[min(n, len(batches)-1)] {
			fmt.Fprint(w, ev)
		}
		fl.Flush()
		if hold {
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &conns
}

func sse(typ string, v any) string {
	b, _ := json.Marshal(v)
	return "event: " + typ + "\ndata: " + string(b) + "\n\n"
}

func next(t *testing.T, ch <-chan api.Event) api.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event channel closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return api.Event{}
}

func TestEventsReconnectAfterDrop(t *testing.T) {
	srv, conns := sseServer(t, [][]string{
		{
			sse("snapshot", api.QueueStats{Depth: 1}),
			"event: order\ndata: {\"event\":\"started\",\"order_id\":5,\n", // torn: never dispatched
			"\n",
			sse("order", api.OrderEvent{Event: "succeeded", OrderID: 5, Status: "active"}),
			"event: future\ndata: {}\n\n",
			sse("dropped", map[string]int{"count": 4}),
		},
		{sse("snapshot", api.QueueStats{Depth: 2})},
	}, false)
	c, err := client.New(srv.URL, token, client.WithBackoff(5*time.Millisecond, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := c.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checks := []func(api.Event) bool{
		func(e api.Event) bool { return e.Type == api.EventConn && e.Conn.Connected },
		func(e api.Event) bool { return e.Type == api.EventSnapshot && e.Snapshot.Depth == 1 },
		func(e api.Event) bool {
			return e.Type == api.EventOrder && e.Order.OrderID == 5 && e.Order.Status == "active"
		},
		func(e api.Event) bool { return e.Type == api.EventDropped && e.Dropped == 4 },
		func(e api.Event) bool {
			return e.Type == api.EventConn && !e.Conn.Connected && e.Conn.Err != "" && !e.Conn.RetryAt.IsZero()
		},
		func(e api.Event) bool { return e.Type == api.EventConn && e.Conn.Connected },
		func(e api.Event) bool { return e.Type == api.EventSnapshot && e.Snapshot.Depth == 2 },
	}
	for i, ok := range checks {
		if ev := next(t, ch); !ok(ev) {
			t.Fatalf("event %d = %+v (conn %+v)", i, ev, ev.Conn)
		}
	}
	if conns.Load() < 2 {
		t.Fatalf("connections = %d, want a reconnect", conns.Load())
	}
	cancel()
	for range ch {
	}
}

func TestEventsIdleStreamReconnects(t *testing.T) {
	srv, conns := sseServer(t, [][]string{{}}, true)
	c, _ := client.New(srv.URL, token,
		client.WithBackoff(5*time.Millisecond, 5*time.Millisecond), client.WithIdleTimeout(50*time.Millisecond))
	ch, _ := c.Events(t.Context())
	if ev := next(t, ch); ev.Type != api.EventConn || !ev.Conn.Connected {
		t.Fatalf("first = %+v", ev)
	}
	ev := next(t, ch)
	if ev.Type != api.EventConn || ev.Conn.Connected || !strings.Contains(ev.Conn.Err, "silent") {
		t.Fatalf("second = %+v %+v", ev, ev.Conn)
	}
	if ev := next(t, ch); ev.Type != api.EventConn || !ev.Conn.Connected || conns.Load() < 2 {
		t.Fatalf("third = %+v, conns %d", ev, conns.Load())
	}
}

func TestEventsUnreachableBacksOff(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	c, _ := client.New(url, token, client.WithBackoff(10*time.Millisecond, 40*time.Millisecond))
	ch, _ := c.Events(t.Context())
	var gaps []time.Duration
	var last time.Time
	for range 4 {
		ev := next(t, ch)
		if ev.Type != api.EventConn || ev.Conn.Connected || ev.Conn.Err == "" {
			t.Fatalf("event = %+v", ev)
		}
		if !last.IsZero() {
			gaps = append(gaps, ev.Conn.RetryAt.Sub(last))
		}
		last = ev.Conn.RetryAt
		if strings.Contains(ev.Conn.Err, token) {
			t.Fatal("error leaks token")
		}
	}
	// RetryAt = now + backoff, so consecutive gaps grow until the cap.
	if gaps[1] < gaps[0] {
		t.Errorf("backoff did not grow: %v", gaps)
	}
}

// TestTerminateRefused: the admin API's 409 for an order that is not active comes
// back as an *api.Error carrying the daemon's sentence.
func TestTerminateRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/admin/orders/45/terminate" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprint(w, `{"error":"the order is not in a state that allows this: order 45 is pending","code":"conflict"}`)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, token)
	_, err := c.TerminateOrder(t.Context(), 45)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != "conflict" || !strings.Contains(ae.Message, "order 45 is pending") {
		t.Fatalf("err = %v", err)
	}
}

// TestTerminateOutlastsRequestTimeout: deleting a server takes the provider seconds,
// so a terminate is not cut off by the deadline that suits reads.
func TestTerminateOutlastsRequestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"order_id":43,"status":"terminated"}`)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, token, client.WithRequestTimeout(100*time.Millisecond))
	if _, err := c.Order(t.Context(), 43); err == nil {
		t.Fatal("a read outlived the request timeout; the test proves nothing")
	}
	o, err := c.TerminateOrder(t.Context(), 43)
	if err != nil || o.Status != "terminated" {
		t.Fatalf("terminate = %+v, %v", o, err)
	}
}
