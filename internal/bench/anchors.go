package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// The anchors scenario measures hangar beside what a Go developer would build instead
// (issue 18): the peers in internal/bench/anchors, each a module of its own (Fiber,
// asynq and go-redis stay out of hangar's go.mod), on a throwaway Redis with an
// append-only file. Both sides of each ratio are separate processes loaded by the same
// generator (internal/bench/anchors/load) with the same arguments, one after the other
// in every round, so that the machine's drift falls on both alike:
//
//	webhook  Fiber + its limiter middleware on Redis (AOF everysec) | hangar POST /webhook
//	views    Fiber + Redis everysec (SET NX EX dedup, one pipeline)  | hangar POST /api/views/:slug
//	orders   Fiber + asynq on Redis everysec, and on Redis always    | hangar POST /orders
//
// Without redis-server on PATH it says how to install it and loads hangar alone.
const (
	anchorSecret    = "bar-secret" // the generator's and the anchors' defaults
	anchorAdmin     = "bar-admin-token-0123456"
	anchorIPHeader  = "CF-Connecting-IP"
	anchorSpec      = "sim-nano"
	anchorWebhookN  = 30_000
	anchorUsers     = 10_000 // webhook users
	anchorViewsN    = 50_000
	anchorViewsIPs  = 100_000
	anchorOrdersN   = 20_000
	anchorOrderUser = 20_000 // one order per user: hangar's 10/h order limit never bites
	// anchorWorkers is asynq's server concurrency and hangar's --max-concurrency:
	// the same number of orders provisioned at once on both sides.
	anchorWorkers = 64
	redisInstall  = "apt-get update && apt-get install -y redis-server"
)

// anchorRun is what the generator measured in one run, plus the servers' CPU.
type anchorRun struct {
	rate      float64 // requests (orders accepted) per second
	p50, p99  time.Duration
	completed float64       // orders mode: orders completed per second, first POST to drained
	cpu       time.Duration // server-side CPU (the anchor and its Redis, or hangar) in the timed part, to drained
	n         int
	// orders mode: from the last answer to the queue drained, its wall time and the
	// servers' CPU in it (cores busy = drainCPU / drain: below 1 on two cores, the
	// completion waits rather than computes).
	drain, drainCPU time.Duration
}

// anchorKit holds the binaries one scenario run builds.
type anchorKit struct {
	dir     string
	load    string
	hangar  string
	anchors map[string]string // name -> binary; empty without redis-server
}

// anchorWork is one row of the comparison.
type anchorWork struct {
	name, mode string
	args       []string // to the generator
	peers      []anchorPeer
}

// anchorPeer is one anchor a work is compared against.
type anchorPeer struct {
	label  string // as printed
	anchor string // binary name in anchorKit.anchors
	fsync  string // Redis appendfsync
	// issue 18's goals for hangar ÷ this anchor (0: none): requests or orders accepted
	// per second, and orders completed per second.
	target, completedTarget float64
}

var anchorWorks = []anchorWork{
	{"webhook", "webhook", []string{"-n", strconv.Itoa(anchorWebhookN), "-users", strconv.Itoa(anchorUsers)},
		[]anchorPeer{{"Fiber+Redis limiter", "fiberlimit", "everysec", 2, 0}}},
	{"views", "views", []string{"-n", strconv.Itoa(anchorViewsN), "-users", strconv.Itoa(anchorViewsIPs)},
		[]anchorPeer{{"Fiber+Redis", "fiberviews", "everysec", 2, 0}}},
	{"orders", "orders", []string{"-n", strconv.Itoa(anchorOrdersN), "-users", strconv.Itoa(anchorOrderUser), "-spec", anchorSpec},
		[]anchorPeer{{"Fiber+asynq everysec", "fiberasynq", "everysec", 1.5, 2}, {"Fiber+asynq always", "fiberasynq", "always", 0, 0}}},
}

func runAnchorsBench() error {
	dir, err := os.MkdirTemp("", "hangar-bench-anchors-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kit := &anchorKit{dir: dir, load: filepath.Join(dir, "load"), hangar: filepath.Join(dir, "hangar"), anchors: map[string]string{}}
	t0 := time.Now()
	if err := goBuild(kit.load, "internal/bench/anchors/load", "."); err != nil {
		return err
	}
	if err := buildHangar(kit.hangar); err != nil {
		return err
	}
	redis, _ := exec.LookPath("redis-server")
	if redis != "" {
		for _, name := range []string{"fiberlimit", "fiberviews", "fiberasynq"} {
			bin := filepath.Join(dir, name)
			if err := goBuild(bin, "internal/bench/anchors/"+name, "."); err != nil {
				return err
			}
			kit.anchors[name] = bin
		}
	}
	built := "the generator (internal/bench/anchors/load), hangar and the anchors"
	if redis == "" {
		built = "the generator (internal/bench/anchors/load) and hangar"
	}
	fmt.Printf("  %-24s %9s   %s; %d clients; load average %s\n", "built", fmtDur(time.Since(t0)), built, cfg.Clients, loadAverage())
	if redis == "" {
		fmt.Printf("  redis-server is not on PATH: the anchors need it (%s). Loading hangar alone.\n", redisInstall)
		summaryNotes = append(summaryNotes, "anchors not run: redis-server is not on PATH; install it with: "+redisInstall)
	} else {
		out, _ := exec.Command(redis, "--version").Output()
		fmt.Printf("  %s", out)
	}
	rounds := max(cfg.AnchorRuns, 1)
	type series struct {
		hangar []anchorRun
		peers  [][]anchorRun
	}
	all := make([]series, len(anchorWorks))
	var errs []error
	for round := 1; round <= rounds; round++ {
		fmt.Printf("  round %d of %d\n", round, rounds)
		for wi, w := range anchorWorks {
			if all[wi].peers == nil {
				all[wi].peers = make([][]anchorRun, len(w.peers))
			}
			if len(kit.anchors) > 0 {
				for pi, p := range w.peers {
					r, err := kit.runAnchor(w, p)
					if err != nil {
						errs = append(errs, fmt.Errorf("%s %s round %d: %w", w.name, p.label, round, err))
						continue
					}
					printAnchorRun(w.name+" "+p.label, w, r)
					all[wi].peers[pi] = append(all[wi].peers[pi], r)
				}
			}
			r, err := kit.runHangar(w)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s hangar round %d: %w", w.name, round, err))
				continue
			}
			printAnchorRun(w.name+" hangar", w, r)
			all[wi].hangar = append(all[wi].hangar, r)
		}
	}
	fmt.Println()
	if len(kit.anchors) == 0 {
		return errors.Join(errs...)
	}
	fmt.Printf("  ratios hangar ÷ anchor, medians of %d rounds [range]; p99 medians hangar | anchor; server CPU per request (the anchor's includes its Redis)\n", rounds)
	for wi, w := range anchorWorks {
		h := all[wi].hangar
		for pi, p := range w.peers {
			a := all[wi].peers[pi]
			if len(h) == 0 || len(a) == 0 || len(h) != len(a) {
				continue // a failed run: no paired ratio
			}
			what := "req/s"
			if w.mode == "orders" {
				what = "accepted"
			}
			ratios := pairRatios(h, a, func(r anchorRun) float64 { return r.rate })
			line := fmt.Sprintf("%s vs %s, %s", w.name, p.label, what)
			fmt.Printf("  %-44s %s   p99 %s | %s   cpu/req %s | %s\n", line, fmtRatios(ratios),
				fmtDur(medianDur(h, func(r anchorRun) time.Duration { return r.p99 })),
				fmtDur(medianDur(a, func(r anchorRun) time.Duration { return r.p99 })),
				fmtDur(medianDur(h, anchorRun.cpuPerReq)), fmtDur(medianDur(a, anchorRun.cpuPerReq)))
			summaryAdd(line, ratios, p.target, medianDur(h, func(r anchorRun) time.Duration { return r.p99 }), medianDur(a, func(r anchorRun) time.Duration { return r.p99 }))
			if w.mode == "orders" {
				ratios := pairRatios(h, a, func(r anchorRun) float64 { return r.completed })
				line := fmt.Sprintf("%s vs %s, completed", w.name, p.label)
				fmt.Printf("  %-44s %s\n", line, fmtRatios(ratios))
				summaryAdd(line, ratios, p.completedTarget, 0, 0)
			}
		}
	}
	return errors.Join(errs...)
}

func (r anchorRun) cpuPerReq() time.Duration {
	if r.n == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.n)
}

// pairRatios is hangar ÷ anchor for each round.
func pairRatios(h, a []anchorRun, v func(anchorRun) float64) []float64 {
	out := make([]float64, 0, len(h))
	for i := range h {
		if d := v(a[i]); d > 0 {
			out = append(out, v(h[i])/d)
		}
	}
	return out
}

// fmtRatios prints "1.23× [0.98–1.40]" (the median, the upper one of an even count).
func fmtRatios(v []float64) string {
	if len(v) == 0 {
		return "   —"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return fmt.Sprintf("%5.2f× [%.2f–%.2f]", s[len(s)/2], s[0], s[len(s)-1])
}

func medianDur(runs []anchorRun, v func(anchorRun) time.Duration) time.Duration {
	if len(runs) == 0 {
		return 0
	}
	d := make([]time.Duration, len(runs))
	for i, r := range runs {
		d[i] = v(r)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func printAnchorRun(name string, w anchorWork, r anchorRun) {
	done := ""
	if w.mode == "orders" {
		done = fmt.Sprintf("   completed %6.0f/s (drain %s, %.2f cores busy)", r.completed, fmtDur(r.drain), r.drainCPU.Seconds()/max(r.drain.Seconds(), 1e-9))
	}
	fmt.Printf("  %-34s %7.0f req/s   p50 %9s   p99 %9s%s   server cpu/req %s\n",
		name, r.rate, fmtDur(r.p50), fmtDur(r.p99), done, fmtDur(r.cpuPerReq()))
}

// runAnchor starts a throwaway Redis and the anchor, and loads it.
func (k *anchorKit) runAnchor(w anchorWork, p anchorPeer) (anchorRun, error) {
	dir, err := os.MkdirTemp(k.dir, p.anchor+"-")
	if err != nil {
		return anchorRun{}, err
	}
	defer os.RemoveAll(dir)
	redisAddr, err := freeAddr()
	if err != nil {
		return anchorRun{}, err
	}
	_, redisPort, _ := net.SplitHostPort(redisAddr)
	redis, err := startProc(nil, "redis-server", "--port", redisPort, "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--appendfsync", p.fsync, "--save", "", "--daemonize", "no")
	if err != nil {
		return anchorRun{}, err
	}
	defer redis.stop()
	if err := waitTCP(redisAddr, redis); err != nil {
		return anchorRun{}, err
	}
	addr, err := freeAddr()
	if err != nil {
		return anchorRun{}, err
	}
	var args []string
	switch p.anchor {
	case "fiberlimit":
		args = []string{"-serve", addr, "-secret", anchorSecret, "-redis", redisPort}
	case "fiberviews":
		args = []string{"-serve", addr, "-redis", redisAddr}
	case "fiberasynq":
		args = []string{"-listen", addr, "-redis", redisAddr, "-c", strconv.Itoa(anchorWorkers)}
	}
	anchor, err := startProc(nil, k.anchors[p.anchor], args...)
	if err != nil {
		return anchorRun{}, err
	}
	defer anchor.stop()
	if err := waitTCP(addr, anchor); err != nil {
		return anchorRun{}, err
	}
	return k.runLoad(w, addr, anchor, redis)
}

// runHangar starts `hangar serve` on a fresh data directory, configured as the
// generator expects, and loads it.
func (k *anchorKit) runHangar(w anchorWork) (anchorRun, error) {
	dir, err := os.MkdirTemp(k.dir, "hangar-")
	if err != nil {
		return anchorRun{}, err
	}
	defer os.RemoveAll(dir)
	addr, err := freeAddr()
	if err != nil {
		return anchorRun{}, err
	}
	h, err := startProc(hangarEnv(dir, addr), k.hangar, "serve", "--ssh", "")
	if err != nil {
		return anchorRun{}, err
	}
	defer h.stop()
	if err := waitHealthy(addr, h); err != nil {
		return anchorRun{}, err
	}
	return k.runLoad(w, addr, h)
}

// hangarEnv is the environment of `hangar serve` in the comparison: serve's defaults
// (fsync on, 30 messages per 60 s, 10 orders per user per hour) except a provider that
// answers at once and never fails, as many orders provisioned at once as asynq's
// workers, and the client IP from the header the generator sets.
func hangarEnv(dir, addr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANGAR_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"HANGAR_DATA_DIR="+filepath.Join(dir, "data"), "HANGAR_HTTP_ADDR="+addr,
		"HANGAR_WEBHOOK_SECRET="+anchorSecret, "HANGAR_ADMIN_TOKEN="+anchorAdmin,
		"HANGAR_SIM_LATENCY=0s", "HANGAR_SIM_FAIL_RATE=0",
		"HANGAR_MAX_CONCURRENCY="+strconv.Itoa(anchorWorkers),
		"HANGAR_CLIENT_IP_HEADER="+anchorIPHeader, "HANGAR_LOG_LEVEL=warn",
	)
}

// runLoad runs the generator against addr and reads its figures; servers' CPU is
// counted from the start of the timed part (after the orders mode's deposits) to the
// generator's exit (for orders: the queue drained).
func (k *anchorKit) runLoad(w anchorWork, addr string, servers ...*proc) (anchorRun, error) {
	args := append([]string{"-mode", w.mode, "-url", "http://" + addr, "-c", strconv.Itoa(cfg.Clients),
		"-secret", anchorSecret, "-admin", anchorAdmin}, w.args...)
	cmd := exec.Command(k.load, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return anchorRun{}, err
	}
	if err := cmd.Start(); err != nil {
		return anchorRun{}, err
	}
	cpu := func() time.Duration {
		var t time.Duration
		for _, s := range servers {
			t += s.cpu()
		}
		return t
	}
	var r anchorRun
	var cpu0, cpuDrain time.Duration
	var drainStart time.Time
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		switch {
		case line == "PHASE load":
			cpu0 = cpu()
		case line == "PHASE drain":
			cpuDrain, drainStart = cpu(), time.Now()
		case strings.HasPrefix(line, "RESULT "):
			f := fields(line)
			r.rate, _ = strconv.ParseFloat(f["rate"], 64)
			p50, _ := strconv.ParseInt(f["p50"], 10, 64)
			p99, _ := strconv.ParseInt(f["p99"], 10, 64)
			r.p50, r.p99 = time.Duration(p50), time.Duration(p99)
			if f["non2xx"] != "0" {
				err = fmt.Errorf("%s non-2xx answers: %s", f["non2xx"], strings.TrimSpace(stderr.String()))
			}
		case strings.HasPrefix(line, "COMPLETED "):
			r.completed, _ = strconv.ParseFloat(fields(line)["rate"], 64)
		}
	}
	werr := cmd.Wait()
	end := cpu()
	r.cpu = end - cpu0
	if !drainStart.IsZero() {
		r.drain, r.drainCPU = time.Since(drainStart), end-cpuDrain
	}
	r.n, _ = strconv.Atoi(w.args[1])
	if werr != nil || err != nil || r.rate == 0 || (w.mode == "orders" && r.completed == 0) {
		return r, fmt.Errorf("generator: %v %v\n%s\n%s", werr, err, strings.Join(lines, "\n"), stderr.String())
	}
	return r, nil
}

// fields parses "KEY a=1 b=2" into a map.
func fields(line string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(line)[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// proc is a server process the scenario started (hangar, an anchor, Redis).
type proc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	exited chan struct{}
}

// startProc starts bin with args in env (nil: this process's).
func startProc(env []string, bin string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.Stdout = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *proc) cpu() time.Duration { return pidCPU(p.cmd.Process.Pid) }

// stop sends SIGTERM and waits (killing after 20 s).
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *proc) tail() string {
	s := p.stderr.String()
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

// waitTCP waits until addr accepts connections or p exits.
func waitTCP(addr string, p *proc) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited at start:\n%s", filepath.Base(p.cmd.Path), p.tail())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not listen on %s in 20 s:\n%s", filepath.Base(p.cmd.Path), addr, p.tail())
		}
	}
}

// waitHealthy waits until hangar answers GET /health on addr with 200.
func waitHealthy(addr string, p *proc) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if status, _, err := fasthttp.Get(nil, "http://"+addr+"/health"); err == nil && status == 200 {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("hangar serve exited at start:\n%s", p.tail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hangar serve did not answer /health in 30 s:\n%s", p.tail())
		}
	}
}

// pidCPU is the CPU time (user and system) process pid has used, from /proc/PID/stat
// in clock ticks (100 a second on Linux).
func pidCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces:
	// state is the first, utime the 12th, stime the 13th.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
