package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/hangarhq/hangar/engine"
	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/store"
)

// Issue 2's webhook benchmark and its targets.
const (
	webhookUsers     = 10_000
	webhookSecret    = "bench-webhook-secret"
	webhookRateLimit = 30 // serve's defaults
	webhookWindow    = time.Minute
	targetRatio      = 0.8
	targetP99        = 5 * time.Millisecond
	drainTimeout     = 2 * time.Minute
	// engineStopTimeout bounds shutdown; serve allows 20 s, the bench only needs the
	// stack gone before the baseline runs.
	engineStopTimeout = 5 * time.Second
)

// runWebhookBench loads POST /webhook on the durable stack, then on the same Fiber app
// backed by an in-memory limiter, and compares them.
func runWebhookBench() error {
	fmt.Printf("  POST /webhook: %d clients, %d users, /help, %s measured after %s warm-up, SyncWrites on; load average %s\n",
		cfg.Clients, webhookUsers, cfg.Duration, cfg.Warmup, loadAverage())
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	durable, err := benchDurableWebhook()
	if err != nil {
		return err
	}
	baseline, err := benchBaselineWebhook(log)
	if err != nil {
		return err
	}
	fmt.Println()
	ratio := durable.RPS() / baseline.RPS()
	printTarget("ratio hangar/baseline", fmt.Sprintf("%.2f", ratio), fmt.Sprintf(">= %.2f", targetRatio), ratio >= targetRatio)
	if d := durable.CPUPerRequest(); d > 0 {
		fmt.Printf("  %-24s %9.2f   baseline cpu/req ÷ hangar cpu/req: the ratio a CPU-bound run would reach; steadier than req/s on a shared machine\n",
			"cpu ratio", float64(baseline.CPUPerRequest())/float64(d))
	}
	p99 := durable.Percentile(0.99)
	printTarget("p99 hangar", fmtDur(p99), "< "+fmtDur(targetP99), p99 < targetP99)
	return errors.Join(durable.check("hangar"), baseline.check("baseline"))
}

// benchDurableWebhook runs the stack as cmd/hangar/serve.go wires it, loads it, and
// reports how long the engine then needs to empty the inbox.
func benchDurableWebhook() (loadResult, error) {
	stack, err := startServeStack(webhookSpec)
	if err != nil {
		return loadResult{}, err
	}
	defer stack.close()

	var logStats [2]store.LogStats
	var sched [2]schedSample
	res, err := loadWebhook(stack.addr, true, func() { logStats[0], sched[0] = stack.store.LogStats(), readSched() })
	logStats[1], sched[1] = stack.store.LogStats(), readSched()
	if err != nil {
		return res, err
	}
	res.print("hangar (durable)")
	printLogStats(logStats[0], logStats[1])
	printSched(sched[0], sched[1])
	printLiveHeap()
	left, took, err := waitInboxEmpty(stack.store, drainTimeout)
	if err != nil {
		return res, err
	}
	fmt.Printf("  %-24s %9s   (%d updates were still in the inbox when the load stopped)\n",
		"inbox drained in", fmtDur(took), left)
	if queued, err := stack.store.QueuedMessages(1 << 22); err == nil {
		fmt.Printf("  %-24s %9d   replies still queued (sending off; they are logged at the outbox pace)\n",
			"outbox backlog", len(queued))
	}
	return res, nil
}

// benchBaselineWebhook serves the same Fiber app with a non-durable in-memory limiter.
func benchBaselineWebhook(log *slog.Logger) (loadResult, error) {
	srv := hangarhttp.New(webhookHTTPConfig(log, prometheus.NewRegistry()),
		hangarhttp.Deps{Updates: newMemLimiter(webhookRateLimit, webhookWindow)})
	addr, stop, err := serveHTTP(srv)
	if err != nil {
		return loadResult{}, err
	}
	defer stop()
	res, err := loadWebhook(addr, false, func() {})
	if err == nil {
		res.print("baseline (in-memory)")
	}
	return res, err
}

func webhookHTTPConfig(log *slog.Logger, reg *prometheus.Registry) hangarhttp.Config {
	return hangarhttp.Config{WebhookSecret: webhookSecret, MaxBody: 1 << 20, Logger: log, Registry: reg}
}

// webhookSpec is the stack of `hangar serve` for the webhook load.
var webhookSpec = stackSpec{
	name: "webhook",
	engine: func(_ *serveStack, log *slog.Logger, reg *prometheus.Registry) (engine.Config, error) {
		return engine.Config{RateLimit: webhookRateLimit, RateWindow: webhookWindow, Logger: log, Registry: reg}, nil
	},
	http: webhookHTTPConfig,
	deps: func(s *serveStack) hangarhttp.Deps {
		return hangarhttp.Deps{Updates: s.eng, RateLimits: s.eng, Health: s.eng, Store: s.store}
	},
	timeStop: true,
}

// mutableHandler writes warn-and-above records to stderr until muted, then counts them.
type mutableHandler struct {
	slog.Handler
	muted   *atomic.Bool
	dropped *atomic.Int64
}

func newMutableHandler(level slog.Level) *mutableHandler {
	return &mutableHandler{
		Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}),
		muted:   &atomic.Bool{}, dropped: &atomic.Int64{},
	}
}

func (h *mutableHandler) mute() { h.muted.Store(true) }

// waitQuiet waits until no record was dropped for quiet (at most max) and returns the count.
func (h *mutableHandler) waitQuiet(quiet, max time.Duration) int64 {
	deadline := time.Now().Add(max)
	n := h.dropped.Load()
	for time.Now().Before(deadline) {
		time.Sleep(quiet)
		m := h.dropped.Load()
		if m == n {
			break
		}
		n = m
	}
	return n
}

func (h *mutableHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.muted.Load() {
		h.dropped.Add(1)
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *mutableHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return &mutableHandler{h.Handler.WithAttrs(a), h.muted, h.dropped}
}

func (h *mutableHandler) WithGroup(name string) slog.Handler {
	return &mutableHandler{h.Handler.WithGroup(name), h.muted, h.dropped}
}

// loadAverage is the 1-minute load average, so that a noisy neighbour shows in the output.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// serveHTTP serves srv on a free loopback port until stop is called.
func serveHTTP(srv *hangarhttp.Server) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	return ln.Addr().String(), stop, nil
}

// waitInboxEmpty polls the inbox until the engine has processed every update.
func waitInboxEmpty(st *store.Store, timeout time.Duration) (left int, took time.Duration, err error) {
	start := time.Now()
	left, err = st.InboxDepth()
	for n := left; err == nil && n > 0; n, err = st.InboxDepth() {
		if time.Since(start) > timeout {
			return left, time.Since(start), fmt.Errorf("inbox still holds %d updates after %s", n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return left, time.Since(start), err
}

// loadWebhook warms addr up, then measures it; profile turns on -cpuprofile for the
// measured part, and measured is called just before it.
func loadWebhook(addr string, profile bool, measured func()) (loadResult, error) {
	l := newWebhookLoad(addr, cfg.Clients)
	ctx := context.Background()
	runLoad(ctx, cfg.Clients, cfg.Warmup, l.do)
	measured()
	stopProfile, err := startCPUProfile(profile, "webhook")
	if err != nil {
		return loadResult{}, err
	}
	res := runLoad(ctx, cfg.Clients, cfg.Duration, l.do)
	stopProfile()
	return res, nil
}

// startCPUProfile starts the phase's profile (see startPhaseProfile) when on.
func startCPUProfile(on bool, phase string) (stop func(), err error) {
	if !on {
		return func() {}, nil
	}
	return startPhaseProfile(phase)
}

// startProfileTo starts a CPU profile written to path; stop ends it and says where.
func startProfileTo(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		fmt.Printf("  %-24s %9s   %s\n", "cpu profile", "written", path)
	}, nil
}

// webhookLoad posts Telegram updates with unique, increasing update_ids, cycling through
// webhookUsers users. Each worker reuses its own request, response and body buffer.
type webhookLoad struct {
	client *fasthttp.HostClient
	uri    string
	nextID atomic.Int64
	reqs   []*fasthttp.Request
	resps  []*fasthttp.Response
	bodies [][]byte
}

func newWebhookLoad(addr string, clients int) *webhookLoad {
	l := &webhookLoad{
		client: &fasthttp.HostClient{
			Addr:               addr,
			MaxConns:           clients,
			MaxConnWaitTimeout: 10 * time.Second,
			ReadTimeout:        10 * time.Second,
			WriteTimeout:       10 * time.Second,
		},
		uri:    "http://" + addr + "/webhook",
		reqs:   make([]*fasthttp.Request, clients),
		resps:  make([]*fasthttp.Response, clients),
		bodies: make([][]byte, clients),
	}
	for w := range clients {
		l.reqs[w], l.resps[w] = l.newRequest(), &fasthttp.Response{}
		l.bodies[w] = make([]byte, 0, 256)
	}
	return l
}

func (l *webhookLoad) newRequest() *fasthttp.Request {
	req := &fasthttp.Request{}
	req.SetRequestURI(l.uri)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", webhookSecret)
	return req
}

func (l *webhookLoad) do(worker, _ int) (int, error) {
	id := l.nextID.Add(1)
	user := 1_000_000 + id%webhookUsers
	l.bodies[worker] = appendUpdate(l.bodies[worker][:0], id, user)
	req, resp := l.reqs[worker], l.resps[worker]
	req.SetBodyRaw(l.bodies[worker])
	if err := l.client.Do(req, resp); err != nil {
		return 0, err
	}
	return resp.StatusCode(), nil
}

// appendUpdate appends a private-chat "/help" message update from user.
func appendUpdate(b []byte, updateID, user int64) []byte {
	b = append(b, `{"update_id":`...)
	b = strconv.AppendInt(b, updateID, 10)
	b = append(b, `,"message":{"message_id":`...)
	b = strconv.AppendInt(b, updateID, 10)
	b = append(b, `,"date":1700000000,"from":{"id":`...)
	b = strconv.AppendInt(b, user, 10)
	b = append(b, `,"is_bot":false,"first_name":"Bench"},"chat":{"id":`...)
	b = strconv.AppendInt(b, user, 10)
	return append(b, `,"type":"private"},"text":"/help","entities":[{"type":"bot_command","offset":0,"length":5}]}}`...)
}

// memLimiter is the baseline: the seed's per-user window held in a sharded map, with no
// durability, no dedupe and no processing. It answers at once.
type memLimiter struct {
	limit   int
	window  time.Duration
	limited atomic.Int64 // updates over their user's limit (still acknowledged)
	shards  [64]memShard
}

type memShard struct {
	mu sync.Mutex
	m  map[int64]memWindow
	_  [40]byte // keep shards on separate cache lines
}

type memWindow struct {
	count   int
	resetAt time.Time
}

var _ hangarhttp.Updates = (*memLimiter)(nil)

func newMemLimiter(limit int, window time.Duration) *memLimiter {
	l := &memLimiter{limit: limit, window: window}
	for i := range l.shards {
		l.shards[i].m = map[int64]memWindow{}
	}
	return l
}

// AcceptUpdate counts the update in its user's window; over the limit it still
// acknowledges, as hangar does.
func (l *memLimiter) AcceptUpdate(h engine.UpdateHeader, _ []byte) (bool, error) {
	user := h.UserID
	now := time.Now()
	sh := &l.shards[uint64(user)%uint64(len(l.shards))]
	sh.mu.Lock()
	w := sh.m[user]
	if !now.Before(w.resetAt) {
		w = memWindow{resetAt: now.Add(l.window)}
	}
	w.count++
	sh.m[user] = w
	sh.mu.Unlock()
	if w.count > l.limit {
		l.limited.Add(1)
	}
	return true, nil
}

// printLiveHeap prints the heap a collection leaves with the stack still up, beside
// the record cache's budget, which bounds what the store keeps: when entries the cache
// kept held their neighbours' superseded values alive, it grew by every reply the load
// wrote (339 MB after 12 s).
func printLiveHeap() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("  %-24s %6d MB   in use after a collection, load generator included (the record cache's budget: %d MB)\n",
		"live heap", ms.HeapAlloc>>20, store.DefaultCacheBytes>>20)
}
