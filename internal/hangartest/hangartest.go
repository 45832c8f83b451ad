package hangartest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/engine/telegram"
	hangarhttp "github.com/hangarhq/hangar/http"
	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/store"
)

// Secrets used by every test environment.
const (
	WebhookSecret = "test-webhook-secret"
	AdminToken    = "test-admin-token-0123456789"
	ViewerToken   = "test-viewer-token-0123456789"
	ConsoleToken  = "test-console-token-0123456789"
	BotToken      = "123456:TEST-bot-token"
)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the current fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Options adjust the environment.
type Options struct {
	RateLimit  int
	RateWindow time.Duration
	// SendInterval paces the outbox (default 1 ms; Telegram's limit is 1/30 s).
	SendInterval time.Duration
	IdleTimeout  time.Duration
	MaxPending   int
	MaxBody      int
	// WrapStore lets a test put a faulty layer between the engine and the store.
	WrapStore func(engine.Store) engine.Store
	// Dir reuses a data directory (for restart tests); empty means a new temp dir.
	Dir string
	// Queue tunes provisioning; Providers replaces the default instant simulator.
	Queue     engine.QueueConfig
	Providers map[string]engine.Provider
	Catalog   *catalog.Catalog
	// AdminChatID receives dead-letter notices.
	AdminChatID int64
	// StarsRate switches /topup on (minor units per star). Language is the bot's
	// default; empty is English, which the tests written before the bot spoke Korean
	// read.
	StarsRate int64
	Language  string
	// Billing sets the billing period, grace and reminders (default: 720h, far away).
	Billing engine.BillingConfig
}

// Env is a running hangar.
type Env struct {
	URL      string
	Store    *store.Store
	Engine   *engine.Engine
	Telegram *telegramfake.Server
	Clock    *Clock
	Registry *prometheus.Registry
	Dir      string
	Logs     *SyncBuffer
	Password func(orderID int64) string
	server   *hangarhttp.Server
}

// SyncBuffer is a goroutine-safe log sink tests can search.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything logged so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start builds and starts an environment; it is stopped by t.Cleanup.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	env := &Env{Clock: NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)), Logs: &SyncBuffer{}, Dir: opts.Dir}
	if env.Dir == "" {
		env.Dir = t.TempDir()
	}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(env.Logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := store.Open(store.Options{Dir: env.Dir, SyncWrites: true, Logger: log, Now: env.Clock.Now})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	env.Store = st
	env.Telegram = telegramfake.New(BotToken)
	tg, err := telegram.New(BotToken, env.Telegram.URL())
	if err != nil {
		t.Fatal(err)
	}
	env.Registry = prometheus.NewRegistry()
	var es engine.Store = st
	if opts.WrapStore != nil {
		es = opts.WrapStore(st)
	}
	if opts.Providers == nil {
		opts.Providers = map[string]engine.Provider{"sim": cloud.NewSim(cloud.SimConfig{})}
	}
	if opts.Queue.Tick == 0 {
		opts.Queue.Tick = 5 * time.Millisecond
	}
	if opts.Queue.PollInterval == 0 {
		opts.Queue.PollInterval = 10 * time.Millisecond
	}
	env.Password = engine.NewPasswordDeriver([]byte("hangartest password key, 32 bytes!"))
	env.Engine, err = engine.New(engine.Config{
		RateLimit: opts.RateLimit, RateWindow: opts.RateWindow, IdleTimeout: opts.IdleTimeout, MaxPending: opts.MaxPending, Clock: env.Clock, Logger: log,
		Registry: env.Registry, SendInterval: cmp.Or(opts.SendInterval, time.Millisecond), Queue: opts.Queue,
		Providers: opts.Providers, Catalog: opts.Catalog, Password: env.Password, AdminChatID: opts.AdminChatID,
		StarsRate: opts.StarsRate, Language: cmp.Or(opts.Language, "en"),
		Billing: opts.Billing,
	}, es, tg)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Engine.Start(); err != nil {
		t.Fatalf("start engine: %v", err)
	}
	// The engine asks the fake its bot's name in the background; the tests' first
	// updates must find it known, as a daemon's do once Telegram has answered.
	WaitFor(t, 5*time.Second, "the engine to learn its bot's name", func() bool { return env.Engine.BotName() != "" })
	env.server = hangarhttp.New(hangarhttp.Config{
		WebhookSecret: WebhookSecret, AdminToken: AdminToken, ViewerToken: ViewerToken, ConsoleToken: ConsoleToken,
		MaxBody: opts.MaxBody, Logger: log, Registry: env.Registry,
		RateLimit: cmp.Or(opts.RateLimit, 30), RateWindow: cmp.Or(opts.RateWindow, time.Minute), Sending: true,
	}, hangarhttp.Deps{Updates: env.Engine, RateLimits: env.Engine, Health: env.Engine, Store: st,
		Orders: env.Engine, Balances: st, Blog: st, Inspector: st, Broadcasts: env.Engine, Pause: env.Engine, Audit: st, Billing: env.Engine, Payments: env.Engine})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env.URL = "http://" + ln.Addr().String()
	// The goroutine gets the server itself: Stop clears env.server, possibly before
	// the goroutine has run.
	go func(srv *hangarhttp.Server) { _ = srv.Serve(ln) }(env.server)
	t.Cleanup(env.Stop)
	return env
}

// HTTP is the running HTTP server.
func (e *Env) HTTP() *hangarhttp.Server { return e.server }

// Stop shuts everything down (idempotent enough for Cleanup after a manual Stop).
func (e *Env) Stop() {
	if e.server == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Fiber waits for open keep-alive connections; the test's own are idle by now.
	http.DefaultClient.CloseIdleConnections()
	_ = e.server.Shutdown(ctx)
	e.Engine.Stop(ctx)
	_ = e.Store.Close()
	e.Telegram.Close()
	e.server = nil
}

// testWriter sends logs to t.Log only when the test runs verbose, to keep failures readable.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	if testing.Verbose() && os.Getenv("HANGAR_TEST_LOGS") != "" {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

// Update is a Telegram text message update from user (whose private chat id is the same).
func Update(updateID, user int64, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID, "date": 1764417600, "text": text,
			"from": map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
			"chat": map[string]any{"id": user, "type": "private"},
		},
	})
	return b
}

// Callback is a Telegram callback_query update: user pressed a button with data.
func Callback(updateID, user int64, data string) []byte {
	b, _ := json.Marshal(map[string]any{
		"update_id": updateID,
		"callback_query": map[string]any{
			"id": fmt.Sprintf("cb%d", updateID), "data": data, "chat_instance": "1",
			"from":    map[string]any{"id": user, "is_bot": false, "first_name": "Ada"},
			"message": map[string]any{"message_id": 1, "date": 1764417600, "chat": map[string]any{"id": user, "type": "private"}},
		},
	})
	return b
}

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Body   []byte
	Header http.Header
}

// JSON decodes the body into v.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Do sends a request with optional headers (pairs of name, value).
func Do(t testing.TB, method, url string, body []byte, headers ...string) Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: b, Header: resp.Header}
}

// PostUpdate posts a webhook update with the right secret.
func (e *Env) PostUpdate(t testing.TB, body []byte) Response {
	t.Helper()
	return Do(t, http.MethodPost, e.URL+"/webhook", body, "X-Telegram-Bot-Api-Secret-Token", WebhookSecret)
}

// Admin sends an admin API request with the admin token.
func (e *Env) Admin(t testing.TB, method, path string, body []byte) Response {
	t.Helper()
	return Do(t, method, e.URL+path, body, "Authorization", "Bearer "+AdminToken)
}

// WaitFor polls cond until it holds or timeout passes.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Metric reads one unlabelled sample from GET /metrics (0 when absent).
func (e *Env) Metric(t testing.TB, name string) float64 {
	t.Helper()
	r := Do(t, http.MethodGet, e.URL+"/metrics", nil)
	for _, line := range bytes.Split(r.Body, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 2 && string(f[0]) == name {
			var v float64
			fmt.Sscan(string(f[1]), &v)
			return v
		}
	}
	return 0
}

// Settle waits until every accepted update is processed and the outbox is empty.
func (e *Env) Settle(t testing.TB) {
	t.Helper()
	WaitFor(t, 10*time.Second, "inbox and outbox to drain", func() bool {
		n, err := e.Store.InboxDepth()
		if err != nil || n > 0 {
			return false
		}
		q, err := e.Store.QueuedMessages(1)
		return err == nil && len(q) == 0
	})
}

// Bearer sends a request with the webhook secret as bearer (the provisioning API).
func (e *Env) Bearer(t testing.TB, method, path string, body []byte) Response {
	t.Helper()
	return Do(t, method, e.URL+path, body, "Authorization", "Bearer "+WebhookSecret)
}

// Deposit credits a user through the admin API.
func (e *Env) Deposit(t testing.TB, user, amount int64) {
	t.Helper()
	r := e.Admin(t, http.MethodPost, fmt.Sprintf("/admin/users/%d/deposit", user), []byte(fmt.Sprintf(`{"amount":%d}`, amount)))
	if r.Status != 200 {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
}

// Order creates an order over POST /orders and returns its id.
func (e *Env) Order(t testing.TB, user int64, spec, region string) int64 {
	t.Helper()
	r := e.Bearer(t, http.MethodPost, "/orders", []byte(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":%q,"region":%q}`, user, user, spec, region)))
	if r.Status != 201 {
		t.Fatalf("create order: %d %s", r.Status, r.Body)
	}
	var out struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &out)
	return out.OrderID
}

// WaitStatus waits until an order reaches status.
func (e *Env) WaitStatus(t testing.TB, id int64, status string, timeout time.Duration) store.Order {
	t.Helper()
	var o store.Order
	var err error
	deadline := time.Now().Add(timeout)
	for {
		if o, err = e.Store.GetOrder(id); err == nil && o.Status == status {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for order %d to be %s (last: status %q, err %v, history %+v)", timeout, id, status, o.Status, err, o.History)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
