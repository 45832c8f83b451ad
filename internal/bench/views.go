package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/store"
)

// Issue 5's view-counting benchmark and its targets.
const (
	viewsIPs           = 100_000
	viewsSlugs         = 1_000
	viewsIPHeader      = "X-Bench-Client-IP"
	targetCountedViews = 20_000
	targetViewsP99     = 5 * time.Millisecond
	commentsDuration   = 3 * time.Second
)

// viewsBenchConfig is one run of the views scenario.
type viewsBenchConfig struct {
	Clients    int
	Duration   time.Duration
	Warmup     time.Duration
	IPs        int
	Slugs      int
	SyncWrites bool
}

// viewsResult is the measured part of a views run.
type viewsResult struct {
	Load    loadResult
	Counted int64             // answers with "counted":true
	Log     [2]store.LogStats // before and after the measured run
	Sched   [2]schedSample
}

// CountedPerSec is counted views per second of wall time.
func (r viewsResult) CountedPerSec() float64 {
	if r.Load.Elapsed <= 0 {
		return 0
	}
	return float64(r.Counted) / r.Load.Elapsed.Seconds()
}

// runViewsBench loads POST /api/views/:slug on the durable store, then measures comment
// creation, which PBKDF2 bounds by design.
func runViewsBench() error {
	vc := viewsBenchConfig{
		Clients: cfg.Clients, Duration: cfg.Duration, Warmup: cfg.Warmup,
		IPs: viewsIPs, Slugs: viewsSlugs, SyncWrites: true,
	}
	fmt.Printf("  POST /api/views/:slug: %d clients, %d IPs (via %s), %d slugs, %s measured after %s warm-up, SyncWrites on\n",
		vc.Clients, vc.IPs, viewsIPHeader, vc.Slugs, vc.Duration, vc.Warmup)
	res, err := benchViews(vc)
	if err != nil {
		return err
	}
	res.Load.print("views (durable)")
	printLogStats(res.Log[0], res.Log[1])
	printSched(res.Sched[0], res.Sched[1])
	fmt.Println()
	counted := res.CountedPerSec()
	printTarget("counted views/s", fmt.Sprintf("%.0f", counted), fmt.Sprintf(">= %d", targetCountedViews), counted >= targetCountedViews)
	p99 := res.Load.Percentile(0.99)
	printTarget("p99 views", fmtDur(p99), "< "+fmtDur(targetViewsP99), p99 < targetViewsP99)

	clients := 2 * runtime.NumCPU()
	fmt.Printf("\n  POST /api/comments/:slug: %d clients, a new IP per comment, %s, PBKDF2-SHA256 x %d\n",
		clients, commentsDuration, store.PasswordIterations)
	cres, err := benchComments(clients, commentsDuration)
	if err != nil {
		return err
	}
	cres.print("comments (durable)")
	return errors.Join(res.Load.check("views"), cres.check("comments"))
}

// blogStack is a store in a temp dir behind the real Fiber app.
type blogStack struct {
	dir   string
	store *store.Store
	addr  string
	stop  func()
}

func startBlogStack(syncWrites bool) (*blogStack, error) {
	dir, err := os.MkdirTemp("", "hangar-bench-views-")
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: syncWrites, Logger: log})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	srv := hangarhttp.New(hangarhttp.Config{
		AdminToken: "bench-admin-token-0123456789", MaxBody: 1 << 20, Logger: log, Registry: prometheus.NewRegistry(),
		Blog: hangarhttp.BlogConfig{ClientIPHeader: viewsIPHeader},
	}, hangarhttp.Deps{Blog: st, Store: st})
	addr, stop, err := serveHTTP(srv)
	if err != nil {
		st.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return &blogStack{dir: dir, store: st, addr: addr, stop: stop}, nil
}

func (b *blogStack) close() {
	b.stop()
	b.store.Close()
	os.RemoveAll(b.dir)
}

// benchViews starts the stack, warms it up, and measures POST /api/views/:slug from
// cfg.Clients workers, each picking a random IP and slug per request.
func benchViews(vc viewsBenchConfig) (viewsResult, error) {
	stack, err := startBlogStack(vc.SyncWrites)
	if err != nil {
		return viewsResult{}, err
	}
	defer stack.close()
	l := newViewsLoad(stack.addr, vc)
	ctx := context.Background()
	runLoad(ctx, vc.Clients, vc.Warmup, l.do)
	l.counted.Store(0)
	stopProfile, err := startCPUProfile(true, "views")
	if err != nil {
		return viewsResult{}, err
	}
	before, sched := stack.store.LogStats(), readSched()
	res := runLoad(ctx, vc.Clients, vc.Duration, l.do)
	stopProfile()
	return viewsResult{Load: res, Counted: l.counted.Load(), Log: [2]store.LogStats{before, stack.store.LogStats()},
		Sched: [2]schedSample{sched, readSched()}}, nil
}

// viewsLoad posts views; each worker owns its request, response and random source.
type viewsLoad struct {
	client  *fasthttp.HostClient
	base    string
	ips     []string
	slugs   []string
	reqs    []*fasthttp.Request
	resps   []*fasthttp.Response
	rnds    []*rand.Rand
	counted atomic.Int64
}

func newViewsLoad(addr string, vc viewsBenchConfig) *viewsLoad {
	l := &viewsLoad{
		client: &fasthttp.HostClient{
			Addr: addr, MaxConns: vc.Clients, MaxConnWaitTimeout: 10 * time.Second,
			ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		},
		base:  "http://" + addr + "/api/views/",
		ips:   make([]string, vc.IPs),
		slugs: make([]string, vc.Slugs),
		reqs:  make([]*fasthttp.Request, vc.Clients),
		resps: make([]*fasthttp.Response, vc.Clients),
		rnds:  make([]*rand.Rand, vc.Clients),
	}
	for i := range l.ips {
		l.ips[i] = fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	}
	for i := range l.slugs {
		l.slugs[i] = "2026/post-" + strconv.Itoa(i)
	}
	for w := range vc.Clients {
		req := &fasthttp.Request{}
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.Set("CF-IPCountry", "KR")
		req.Header.Set("CF-IPCity", "Seoul")
		req.Header.Set("CF-IPLatitude", "37.5665")
		req.Header.Set("CF-IPLongitude", "126.9780")
		l.reqs[w], l.resps[w] = req, &fasthttp.Response{}
		l.rnds[w] = rand.New(rand.NewPCG(uint64(w), 0x5eed))
	}
	return l
}

func (l *viewsLoad) do(w, _ int) (int, error) {
	req, resp, rnd := l.reqs[w], l.resps[w], l.rnds[w]
	req.SetRequestURI(l.base + l.slugs[rnd.IntN(len(l.slugs))])
	req.Header.Set(viewsIPHeader, l.ips[rnd.IntN(len(l.ips))])
	if err := l.client.Do(req, resp); err != nil {
		return 0, err
	}
	if bytes.Contains(resp.Body(), []byte(`"counted":true`)) {
		l.counted.Add(1)
	}
	return resp.StatusCode(), nil
}

// benchComments measures comment creation; every comment comes from a new IP so that
// the per-IP write limit does not cap the figure.
func benchComments(clients int, dur time.Duration) (loadResult, error) {
	stack, err := startBlogStack(true)
	if err != nil {
		return loadResult{}, err
	}
	defer stack.close()
	client := &fasthttp.HostClient{Addr: stack.addr, MaxConns: clients, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	uri := "http://" + stack.addr + "/api/comments/2026/bench-post"
	body := []byte(`{"name":"bench","content":"a comment of ordinary length, with 한글 and <b>markup</b>","password":"correct-horse-battery"}`)
	var next atomic.Uint32
	do := func(_, _ int) (int, error) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		n := next.Add(1)
		req.Header.SetMethod(fasthttp.MethodPost)
		req.Header.SetContentType("application/json")
		req.Header.Set(viewsIPHeader, fmt.Sprintf("172.%d.%d.%d", 16+n>>16&15, n>>8&255, n&255))
		req.SetRequestURI(uri)
		req.SetBody(body)
		if err := client.Do(req, resp); err != nil {
			return 0, err
		}
		if resp.StatusCode() == fasthttp.StatusCreated {
			return 200, nil // runLoad counts anything but 200 as a failure
		}
		return resp.StatusCode(), nil
	}
	return runLoad(context.Background(), clients, dur, do), nil
}
