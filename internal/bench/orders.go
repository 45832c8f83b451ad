package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/store"
)

// Issue 3's provisioning-queue benchmark and its targets.
const (
	ordersTotal       = 20_000
	ordersUsers       = 2_000 // 10 orders each
	ordersWarmup      = 1_000 // unmeasured orders first (Badger files, Fiber pools, actor paths)
	ordersConcurrency = 1_000 // MaxConcurrency of the zero-latency runs
	ordersDeposit     = 1_000_000
	ordersSpec        = "sim-nano" // 5000 per order
	ordersRegion      = "tokyo"
	ordersSecret      = "bench-orders-secret"
	ordersAdminToken  = "bench-orders-admin-token-0123456789"
	ordersDrainLimit  = 2 * time.Minute

	inflightOrders  = 10_000
	inflightUsers   = 1_000
	inflightLatency = 20 * time.Second

	targetAccepted  = 20_000
	targetCompleted = 13_000
	targetRSS       = 300 << 20
)

// runOrdersBench measures POST /orders (durable before the 201), end-to-end
// completion at zero provider latency, and the peak RSS of a real `hangar serve`
// holding 10,000 orders in flight.
func runOrdersBench() error {
	fmt.Printf("  POST /orders: %d clients, %d orders over %d users (%d unmeasured first), sim provider 0 latency 0 failures, MaxConcurrency %d, SyncWrites on; load average %s\n",
		cfg.Clients, ordersTotal, ordersUsers, ordersWarmup, ordersConcurrency, loadAverage())
	errAccept := benchOrderRuns(max(cfg.OrderRuns, 1))
	fmt.Printf("\n  %d orders in flight: real `hangar serve` subprocess, sim latency %s, MaxConcurrency %d, %d users; load average %s\n",
		inflightOrders, inflightLatency, inflightOrders, inflightUsers, loadAverage())
	errRSS := benchInflightRSS()
	return errors.Join(errAccept, errRSS)
}

// ordersStackSpec is the zero-latency stack of `hangar serve`, wired as serve wires
// it: the simulator keeps its servers in the store, and root passwords are random and
// sealed in the vault (DATA_DIR/secrets), one durable record per order.
var ordersStackSpec = stackSpec{
	name: "orders",
	engine: func(s *serveStack, log *slog.Logger, reg *prometheus.Registry) (engine.Config, error) {
		sim, err := cloud.OpenSim(cloud.SimConfig{}, s.store)
		if err != nil {
			return engine.Config{}, err
		}
		vault, err := engine.OpenVault(filepath.Join(s.dir, "secrets"), s.store, nil)
		if err != nil {
			return engine.Config{}, err
		}
		return engine.Config{
			Logger: log, Registry: reg,
			Queue: engine.QueueConfig{
				MaxConcurrency: ordersConcurrency,
				OrderLimit:     store.OrderLimit{Max: 1_000_000, Window: time.Hour},
			},
			Providers: map[string]engine.Provider{"sim": sim},
			Passwords: vault,
		}, nil
	},
	http: func(log *slog.Logger, reg *prometheus.Registry) hangarhttp.Config {
		return hangarhttp.Config{WebhookSecret: ordersSecret, AdminToken: ordersAdminToken, MaxBody: 1 << 20, Logger: log, Registry: reg}
	},
	deps: func(s *serveStack) hangarhttp.Deps {
		return hangarhttp.Deps{Updates: s.eng, RateLimits: s.eng, Health: s.eng, Store: s.store, Orders: s.eng, Balances: s.store, Inspector: s.store}
	},
}

// depositAll credits every user through the store, from a few workers (group commit).
func depositAll(deposit func(user int64) error, users int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 32)
	for w := range errs {
		wg.Go(func() {
			for {
				u := next.Add(1) - 1
				if u >= int64(users) {
					return
				}
				if err := deposit(orderUser(u)); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func orderUser(i int64) int64 { return 5_000_000 + i }

// orderRates is what one throughput run measured.
type orderRates struct{ accepted, completed float64 }

// benchOrderRuns repeats the throughput run on fresh stacks and judges the targets on
// the median: on this shared machine one run moves by a third either way.
func benchOrderRuns(n int) error {
	var runs []orderRates
	var errs []error
	for i := range n {
		fmt.Printf("  run %d of %d\n", i+1, n)
		r, err := benchOrderThroughput(i + 1)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %d: %w", i+1, err))
			continue
		}
		runs = append(runs, r)
		fmt.Println()
	}
	if len(runs) == 0 {
		return errors.Join(errs...)
	}
	summary := func(name string, rate func(orderRates) float64, target int) {
		vals := make([]string, len(runs))
		for i, r := range runs {
			vals[i] = fmt.Sprintf("%.0f", rate(r))
		}
		median := medianRate(runs, rate)
		printTarget(name, fmt.Sprintf("%.0f", median), fmt.Sprintf(">= %d", target), median >= float64(target))
		fmt.Printf("  %-24s %9s   the median of %d runs: %s\n", "", "", len(runs), strings.Join(vals, ", "))
	}
	summary("orders accepted/s", func(r orderRates) float64 { return r.accepted }, targetAccepted)
	summary("orders completed/s", func(r orderRates) float64 { return r.completed }, targetCompleted)
	return errors.Join(errs...)
}

// medianRate is the median of rate over runs (the upper one of an even count).
func medianRate(runs []orderRates, rate func(orderRates) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = rate(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// benchOrderThroughput runs the accept and completion measurements on one stack.
func benchOrderThroughput(run int) (orderRates, error) {
	st, err := startServeStack(ordersStackSpec)
	if err != nil {
		return orderRates{}, err
	}
	defer st.close()
	if err := depositAll(func(u int64) error { _, err := st.store.Deposit(u, ordersDeposit); return err }, ordersUsers); err != nil {
		return orderRates{}, fmt.Errorf("deposit: %w", err)
	}
	load := newOrdersLoad(st.addr, cfg.Clients, ordersUsers)
	// Warm-up: unmeasured, and waited for, so the measured run starts on an empty queue.
	if w, _ := load.run(ordersWarmup); w.Errors+w.Non200 > 0 {
		return orderRates{}, fmt.Errorf("warm-up: %d not 201, %d errors", w.Non200, w.Errors)
	}
	base, err := waitSucceeded(st.eng, ordersWarmup, 0, ordersDrainLimit)
	if err != nil {
		return orderRates{}, fmt.Errorf("warm-up: %w", err)
	}
	runtime.GC()

	stopAcceptProfile, err := startPhaseProfile(fmt.Sprintf("orders-accept-%d", run))
	if err != nil {
		return orderRates{}, err
	}
	watch := watchSucceeded(st.eng, base.Succeeded+ordersTotal)
	cpu0 := processCPU()
	var mem0 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	log0 := st.store.LogStats()
	sched0 := readSched()
	res, lastAccept := load.run(ordersTotal)
	acceptCPU := processCPU() - cpu0
	stopAcceptProfile()
	stopDrainProfile, err := startPhaseProfile(fmt.Sprintf("orders-drain-%d", run))
	if err != nil {
		return orderRates{}, err
	}
	done := <-watch
	lifeCPU := processCPU() - cpu0
	var mem1 runtime.MemStats
	runtime.ReadMemStats(&mem1)
	stopDrainProfile()
	res.CPU = acceptCPU
	printOrderLoad("accepted (201)", res)
	if done.err == nil {
		perOrder := lifeCPU / ordersTotal
		summaryCPU.hangar = append(summaryCPU.hangar, perOrder)
		fmt.Printf("  %-24s %9s   first POST to the last order active, load generator included (the accept phase alone: %s)\n",
			"cpu per order", fmtDur(perOrder), fmtDur(res.CPUPerRequest()))
		// Counted, not timed: steadier than the CPU on a shared machine, and a third of
		// an order's CPU is allocation and GC.
		fmt.Printf("  %-24s %9d   heap objects, %d bytes, over the same span, load generator included\n",
			"allocations per order", (mem1.Mallocs-mem0.Mallocs)/ordersTotal, (mem1.TotalAlloc-mem0.TotalAlloc)/ordersTotal)
	}
	printLogStats(log0, st.store.LogStats())
	printSched(sched0, readSched())
	fmt.Println()

	rates := orderRates{accepted: float64(res.Requests-res.Non200-res.Errors) / res.Elapsed.Seconds()}
	fmt.Printf("  %-24s %9.0f   accept p50 %s, p99 %s\n", "orders accepted/s", rates.accepted, fmtDur(res.Percentile(0.5)), fmtDur(res.Percentile(0.99)))
	if done.err != nil {
		return orderRates{}, errors.Join(done.err, res.orderCheck())
	}
	took := done.at.Sub(load.start)
	rates.completed = float64(ordersTotal) / took.Seconds()
	fmt.Printf("  %-24s %9.0f\n", "orders completed/s", rates.completed)
	fmt.Printf("  %-24s %9s   first POST to all %d active: %s; last 201 to last active: %s; %d polls of QueueStats\n",
		"end to end", fmtDur(took), ordersTotal, fmtDur(took), fmtDur(done.at.Sub(lastAccept)), done.polls)
	active, err := st.store.CountOrders(store.OrderActive)
	if err == nil && active != ordersTotal+ordersWarmup {
		err = fmt.Errorf("%d orders active in the store, want %d", active, ordersTotal+ordersWarmup)
	}
	fmt.Printf("  %-24s %9d   (store status index, warm-up included); load average now %s\n", "active orders", active, loadAverage())
	return rates, errors.Join(err, res.orderCheck())
}

type succeededAt struct {
	at    time.Time
	polls int
	err   error
}

// watchSucceeded polls QueueStats until Succeeded reaches want and reports when.
func watchSucceeded(eng *engine.Engine, want uint64) <-chan succeededAt {
	ch := make(chan succeededAt, 1)
	go func() {
		s, err := waitSucceeded(eng, int(want), 50*time.Millisecond, ordersDrainLimit)
		ch <- succeededAt{at: time.Now(), polls: s.polls, err: err}
	}()
	return ch
}

type polledStats struct {
	engine.QueueStats
	polls int
}

func waitSucceeded(eng *engine.Engine, want int, every time.Duration, limit time.Duration) (polledStats, error) {
	if every <= 0 {
		every = 10 * time.Millisecond
	}
	deadline := time.Now().Add(limit)
	var p polledStats
	for {
		s, err := eng.QueueStats()
		p.polls++
		if err != nil {
			return p, err
		}
		p.QueueStats = s
		if s.Succeeded >= uint64(want) {
			return p, nil
		}
		if s.DeadLettered+s.Retried > 0 {
			return p, fmt.Errorf("zero-failure run saw %d retries and %d dead letters", s.Retried, s.DeadLettered)
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("only %d of %d orders succeeded after %s (in flight %d, depth %d)", s.Succeeded, want, limit, s.InFlight, s.Depth)
		}
		time.Sleep(every)
	}
}

// startPhaseProfile writes a CPU profile of one phase next to -cpuprofile: for
// "x.prof" and phase p, "x.p.prof".
func startPhaseProfile(phase string) (stop func(), err error) {
	if cfg.CPUProfile == "" {
		return func() {}, nil
	}
	ext := filepath.Ext(cfg.CPUProfile)
	return startProfileTo(strings.TrimSuffix(cfg.CPUProfile, ext) + "." + phase + ext)
}

// printOrderLoad writes one result line; CPU is shown only when it was measured (the
// in-process runs: load generator and hangar together).
func printOrderLoad(name string, r loadResult) {
	cpu := "cpu not measured (hangar is another process)"
	if r.CPU > 0 {
		cpu = fmt.Sprintf("cpu/req %7s (%3.0f%% of %d cores)", fmtDur(r.CPUPerRequest()),
			100*r.CPU.Seconds()/r.Elapsed.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU())
	}
	fmt.Printf("  %-24s %9.0f req/s   p50 %9s   p99 %9s   %s   not-201 %d   errors %d   (%d requests in %s)\n",
		name, r.RPS(), fmtDur(r.Percentile(0.50)), fmtDur(r.Percentile(0.99)), cpu,
		r.Non200, r.Errors, r.Requests, r.Elapsed.Round(time.Millisecond))
}

// orderCheck is an error when an order was not answered 201.
func (r loadResult) orderCheck() error {
	if r.Non200 > 0 || r.Errors > 0 {
		return fmt.Errorf("POST /orders: %d answers other than 201, %d transport errors", r.Non200, r.Errors)
	}
	return nil
}

// ordersLoad posts orders, spreading them round-robin over its users. Unlike runLoad
// it sends a fixed number of requests rather than running for a duration.
type ordersLoad struct {
	client  *fasthttp.HostClient
	uri     string
	clients int
	users   int
	seq     atomic.Int64 // orders posted so far, over every run
	start   time.Time    // when the latest run began
}

func newOrdersLoad(addr string, clients, users int) *ordersLoad {
	return &ordersLoad{
		client: &fasthttp.HostClient{
			Addr: addr, MaxConns: clients, MaxConnWaitTimeout: 10 * time.Second,
			ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		},
		uri: "http://" + addr + "/orders", clients: clients, users: users,
	}
}

// run posts n orders from l.clients workers and returns what it measured and when
// the last 201 arrived.
func (l *ordersLoad) run(n int) (loadResult, time.Time) {
	per := make([]loadResult, l.clients)
	lastOK := make([]time.Time, l.clients)
	var issued atomic.Int64
	l.start = time.Now()
	var wg sync.WaitGroup
	for w := range l.clients {
		per[w].Latencies = make([]time.Duration, 0, n/l.clients+16)
		wg.Go(func() {
			defer pprof.SetGoroutineLabels(context.Background())
			pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), generatorLabels))
			req, resp := &fasthttp.Request{}, &fasthttp.Response{}
			req.SetRequestURI(l.uri)
			req.Header.SetMethod(fasthttp.MethodPost)
			req.Header.SetContentType("application/json")
			req.Header.Set("Authorization", "Bearer "+ordersSecret)
			body := make([]byte, 0, 128)
			r := &per[w]
			for issued.Add(1) <= int64(n) {
				user := orderUser(l.seq.Add(1) % int64(l.users))
				body = appendOrder(body[:0], user)
				req.SetBodyRaw(body)
				t0 := time.Now()
				err := l.client.Do(req, resp)
				t1 := time.Now()
				r.Latencies = append(r.Latencies, t1.Sub(t0))
				r.Requests++
				switch {
				case err != nil:
					r.Errors++
				case resp.StatusCode() != fasthttp.StatusCreated:
					if r.Non200 == 0 {
						fmt.Printf("  first non-201 answer: %d %s\n", resp.StatusCode(), resp.Body())
					}
					r.Non200++
				default:
					lastOK[w] = t1
				}
			}
		})
	}
	wg.Wait()
	res := mergeResults(per, time.Since(l.start))
	var last time.Time
	for _, t := range lastOK {
		if t.After(last) {
			last = t
		}
	}
	return res, last
}

func appendOrder(b []byte, user int64) []byte {
	b = append(b, `{"user_id":`...)
	b = strconv.AppendInt(b, user, 10)
	b = append(b, `,"telegram_user_id":`...)
	b = strconv.AppendInt(b, user, 10)
	return append(b, `,"spec_id":"`+ordersSpec+`","region":"`+ordersRegion+`"}`...)
}

// benchInflightRSS builds hangar, runs `hangar serve` with a 20 s simulated provider,
// puts 10,000 orders in flight and reads the process's peak RSS (VmHWM).
func benchInflightRSS() error {
	dir, err := os.MkdirTemp("", "hangar-bench-inflight-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "hangar")
	t0 := time.Now()
	if err := buildHangar(bin); err != nil {
		return err
	}
	fmt.Printf("  %-24s %9s\n", "go build ./cmd/hangar", fmtDur(time.Since(t0)))

	addr, err := freeAddr()
	if err != nil {
		return err
	}
	d, err := startHangar(bin, dir, addr)
	if err != nil {
		return err
	}
	defer d.stop()
	base := "http://" + addr
	if err := depositAll(func(u int64) error {
		return d.call("POST", fmt.Sprintf("%s/admin/users/%d/deposit", base, u), []byte(`{"amount":1000000}`), 200, nil)
	}, inflightUsers); err != nil {
		return fmt.Errorf("deposit: %w", err)
	}
	rssIdle, _ := procStatus(d.cmd.Process.Pid, "VmRSS")
	load := newOrdersLoad(addr, cfg.Clients, inflightUsers)
	res, _ := load.run(inflightOrders)
	printOrderLoad("accepted (201)", res)
	if err := res.orderCheck(); err != nil {
		return err
	}
	var q engine.QueueStats
	deadline := time.Now().Add(inflightLatency / 2)
	for {
		if err := d.call("GET", base+"/admin/queue", nil, 200, &q); err != nil {
			return err
		}
		if q.InFlight >= inflightOrders || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	reached := time.Since(load.start)
	// Hold a little while all are waiting on the provider, then read the peak.
	time.Sleep(2 * time.Second)
	if err := d.call("GET", base+"/admin/queue", nil, 200, &q); err != nil {
		return err
	}
	hwm, err := procStatus(d.cmd.Process.Pid, "VmHWM")
	if err != nil {
		return err
	}
	rss, _ := procStatus(d.cmd.Process.Pid, "VmRSS")
	m := d.metrics(base, "go_goroutines", "go_memstats_heap_inuse_bytes", "go_memstats_sys_bytes")
	inflightOK := q.InFlight >= inflightOrders && q.Succeeded == 0
	printTarget("in flight at once", strconv.Itoa(q.InFlight), fmt.Sprintf(">= %d", inflightOrders), inflightOK)
	printTarget("peak RSS (VmHWM)", fmt.Sprintf("%.0f MB", float64(hwm)/(1<<20)), fmt.Sprintf("< %d MB", targetRSS>>20), hwm < targetRSS && inflightOK)
	fmt.Printf("  %-24s %9s   %s after the first POST; RSS now %.0f MB (idle after deposits %.0f MB); goroutines %.0f, Go heap in use %.0f MB, Go sys %.0f MB\n",
		"all in flight", "", fmtDur(reached), float64(rss)/(1<<20), float64(rssIdle)/(1<<20),
		m["go_goroutines"], m["go_memstats_heap_inuse_bytes"]/(1<<20), m["go_memstats_sys_bytes"]/(1<<20))
	if !inflightOK {
		return fmt.Errorf("only %d orders in flight (succeeded %d, depth %d)", q.InFlight, q.Succeeded, q.Depth)
	}
	return nil
}

// buildHangar compiles ./cmd/hangar of this module into bin.
func buildHangar(bin string) error { return goBuild(bin, ".", "./cmd/hangar") }

// goBuild compiles pkg into bin from dir, a directory relative to this module's root
// (internal/floor is a module of its own, so it builds from its own directory).
func goBuild(bin, dir, pkg string) error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = filepath.Join(filepath.Dir(strings.TrimSpace(string(out))), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %w\n%s", pkg, dir, err, out)
	}
	return nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// hangarProc is a running `hangar serve`.
type hangarProc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	mu     sync.Mutex
	exited chan struct{}
	client *fasthttp.Client
}

func startHangar(bin, dir, addr string) (*hangarProc, error) {
	cmd := exec.Command(bin, "serve", "--ssh", "")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANGAR_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env,
		"HANGAR_DATA_DIR="+filepath.Join(dir, "data"), "HANGAR_HTTP_ADDR="+addr,
		"HANGAR_WEBHOOK_SECRET="+ordersSecret, "HANGAR_ADMIN_TOKEN="+ordersAdminToken,
		"HANGAR_SIM_LATENCY="+inflightLatency.String(), "HANGAR_SIM_FAIL_RATE=0",
		"HANGAR_MAX_CONCURRENCY="+strconv.Itoa(inflightOrders), "HANGAR_ORDERS_PER_HOUR=1000000",
		"HANGAR_LOG_LEVEL=warn",
	)
	d := &hangarProc{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan struct{}),
		client: &fasthttp.Client{MaxConnsPerHost: 2 * cfg.Clients, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			d.mu.Lock()
			if d.stderr.Len() < 1<<20 {
				d.stderr.Write(append(sc.Bytes(), '\n'))
			}
			d.mu.Unlock()
		}
		pr.Close()
	}()
	go func() { _ = cmd.Wait(); close(d.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := d.call("GET", "http://"+addr+"/health", nil, 200, nil); err == nil {
			return d, nil
		}
		select {
		case <-d.exited:
			return nil, fmt.Errorf("hangar serve exited at start:\n%s", d.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("hangar serve did not answer /health in 30s:\n%s", d.logTail())
		}
	}
}

func (d *hangarProc) logTail() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stderr.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// stop sends SIGTERM, waits up to 20 s (serve's own shutdown limit), then kills.
func (d *hangarProc) stop() {
	start := time.Now()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		fmt.Printf("  %-24s %9s   (SIGTERM with orders in flight)\n", "hangar shutdown took", fmtDur(time.Since(start)))
	case <-time.After(25 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
		fmt.Printf("  %-24s %9s   no exit 25 s after SIGTERM: killed\n", "hangar shutdown", "KILLED")
	}
}

// call makes one request with the admin token; v (if set) receives the JSON answer.
func (d *hangarProc) call(method, url string, body []byte, want int, v any) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.SetMethod(method)
	req.Header.Set("Authorization", "Bearer "+ordersAdminToken)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if err := d.client.Do(req, resp); err != nil {
		return err
	}
	if resp.StatusCode() != want {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode(), resp.Body())
	}
	if v != nil {
		return json.Unmarshal(resp.Body(), v)
	}
	return nil
}

// metrics reads a few unlabelled gauges from GET /metrics.
func (d *hangarProc) metrics(base string, names ...string) map[string]float64 {
	out := map[string]float64{}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(base + "/metrics")
	if err := d.client.Do(req, resp); err != nil {
		return out
	}
	for _, line := range strings.Split(string(resp.Body()), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		for _, n := range names {
			if f[0] == n {
				out[n], _ = strconv.ParseFloat(f[1], 64)
			}
		}
	}
	return out
}

// procStatus reads one "kB" field of /proc/<pid>/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
