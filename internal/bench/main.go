package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hangarhq/hangar/store"
)

// scenario is one named benchmark. run prints its own header and figures and returns an
// error when the scenario could not run or broke a hard rule (a non-200 answer).
type scenario struct {
	name string
	run  func() error
}

// scenarios is every benchmark, in the order they run.
var scenarios = []scenario{
	{"machine", runMachineBench},
	{"floor", runFloorBench},
	{"webhook", runWebhookBench},
	{"views", runViewsBench},
	{"orders", runOrdersBench},
	{"anchors", runAnchorsBench},
}

// benchConfig holds the flags every scenario may read.
type benchConfig struct {
	Only       string
	Clients    int
	OrderRuns  int
	AnchorRuns int
	Duration   time.Duration
	Warmup     time.Duration
	CPUProfile string
	MemProfile string
}

// cfg is set once by main before any scenario runs.
var cfg benchConfig

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&cfg.Only, "only", strings.Join(scenarioNames(), ","), "comma-separated scenarios to run")
	fs.IntVar(&cfg.Clients, "clients", 64, "concurrent load-generator clients")
	fs.IntVar(&cfg.OrderRuns, "order-runs", 3, "runs of the zero-latency orders throughput, each on a fresh stack; the targets are judged on the median")
	fs.IntVar(&cfg.AnchorRuns, "anchor-runs", 3, "rounds of the anchors comparison (each loads every anchor and hangar once, alternately, on fresh processes); ratios are reported as the median and range")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured load duration per run")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "unmeasured load before each measured run")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write CPU profiles of the measured phases next to this path: for x.prof, x.webhook.prof, x.views.prof, x.orders-accept-N.prof, x.orders-drain-N.prof for run N (the generator's goroutines are labelled bench=load)")
	fs.StringVar(&cfg.MemProfile, "memprofile", "", "write a heap profile (allocations of the whole run: -sample_index=alloc_space) to this file at the end")
	fs.IntVar(&runtime.MemProfileRate, "memprofilerate", runtime.MemProfileRate, "bytes allocated per heap profile sample; 1 records every allocation (exact counts, a slower run)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	selected, err := selectScenarios(cfg.Only)
	if err != nil {
		return err
	}
	// The daemon does the same at start (hangar serve); see store.TuneProcs.
	fmt.Printf("GOMAXPROCS %d on %d CPUs (store.TuneProcs: one more than the default, for the log writer)\n", store.TuneProcs(), runtime.NumCPU())
	var errs []error
	for _, s := range selected {
		fmt.Printf("\n== %s ==\n", s.name)
		if err := s.run(); err != nil {
			fmt.Printf("  FAILED: %v\n", err)
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	printSummary()
	if err := writeMemProfile(cfg.MemProfile); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func writeMemProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC() // up-to-date statistics
	if err := pprof.WriteHeapProfile(f); err != nil {
		return err
	}
	fmt.Printf("\nheap profile written to %s (go tool pprof -sample_index=alloc_space)\n", path)
	return nil
}

func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// selectScenarios returns the scenarios named in the comma-separated list, in table order.
func selectScenarios(list string) ([]scenario, error) {
	var want []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(scenarioNames(), n) {
			return nil, fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(scenarioNames(), ", "))
		}
		want = append(want, n)
	}
	var out []scenario
	for _, s := range scenarios {
		if slices.Contains(want, s.name) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no scenario selected")
	}
	return out, nil
}

// loadResult is what one runLoad measured. Latencies are sorted ascending.
type loadResult struct {
	Requests  int
	Non200    int // answers with a status other than 200
	Errors    int // transport errors (no answer at all)
	Elapsed   time.Duration
	CPU       time.Duration // process CPU time (user+system) spent during the run
	Latencies []time.Duration
}

// runLoad calls do from clients concurrent workers until dur has passed or ctx ends.
// worker is the worker's index, i the worker's request number (from 0). do returns the
// HTTP status it got; every call is timed.
func runLoad(ctx context.Context, clients int, dur time.Duration, do func(worker, i int) (status int, err error)) loadResult {
	per := make([]loadResult, clients)
	// Preallocate for ~40k requests/s so that appending never allocates mid-run.
	capacity := int(dur.Seconds()*40_000)/clients + 1024
	cpu0 := processCPU()
	start := time.Now()
	end := start.Add(dur)
	var wg sync.WaitGroup
	for w := range clients {
		per[w].Latencies = make([]time.Duration, 0, capacity)
		wg.Go(func() {
			pprof.Do(ctx, generatorLabels, func(ctx context.Context) { per[w].work(ctx, end, w, do) })
		})
	}
	wg.Wait()
	res := mergeResults(per, time.Since(start))
	res.CPU = processCPU() - cpu0
	return res
}

// generatorLabels mark the load generator's goroutines in CPU profiles, so that the
// server's share can be read alone: go tool pprof -tagignore=bench=load (or -tagfocus
// for the generator's).
var generatorLabels = pprof.Labels("bench", "load")

// processCPU is the CPU time this process has used so far. The load generator runs in
// the same process, so CPU per request counts client and server alike; it is steadier
// than requests/s when other programs share the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (r *loadResult) work(ctx context.Context, end time.Time, worker int, do func(worker, i int) (int, error)) {
	for i := 0; ctx.Err() == nil; i++ {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		status, err := do(worker, i)
		r.Latencies = append(r.Latencies, time.Since(t0))
		r.Requests++
		switch {
		case err != nil:
			r.Errors++
		case status != 200:
			r.Non200++
		}
	}
}

func mergeResults(per []loadResult, elapsed time.Duration) loadResult {
	out := loadResult{Elapsed: elapsed}
	n := 0
	for _, p := range per {
		n += len(p.Latencies)
	}
	out.Latencies = make([]time.Duration, 0, n)
	for _, p := range per {
		out.Requests += p.Requests
		out.Non200 += p.Non200
		out.Errors += p.Errors
		out.Latencies = append(out.Latencies, p.Latencies...)
	}
	slices.Sort(out.Latencies)
	return out
}

// RPS is completed requests per second of wall time.
func (r loadResult) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Percentile returns the latency below which a share p (0..1) of requests finished.
func (r loadResult) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(p * float64(len(r.Latencies)-1))
	return r.Latencies[i]
}

// CPUPerRequest is process CPU time per completed request.
func (r loadResult) CPUPerRequest() time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Requests)
}

// print writes one aligned result line.
func (r loadResult) print(name string) {
	fmt.Printf("  %-24s %9.0f req/s   p50 %9s   p99 %9s   cpu/req %7s (%3.0f%% of %d cores)   non-200 %d   errors %d   (%d requests in %s)\n",
		name, r.RPS(), fmtDur(r.Percentile(0.50)), fmtDur(r.Percentile(0.99)),
		fmtDur(r.CPUPerRequest()), 100*r.CPU.Seconds()/r.Elapsed.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU(),
		r.Non200, r.Errors, r.Requests, r.Elapsed.Round(time.Millisecond))
}

// check is an error when any request failed or was not answered 200.
func (r loadResult) check(name string) error {
	if r.Non200 > 0 || r.Errors > 0 {
		return fmt.Errorf("%s: %d non-200 answers, %d transport errors", name, r.Non200, r.Errors)
	}
	return nil
}

// printTarget writes one aligned "figure vs target" line.
func printTarget(name, value, target string, ok bool) {
	verdict := "MISS"
	if ok {
		verdict = "ok"
	}
	fmt.Printf("  %-24s %9s   target %-10s %s\n", name, value, target, verdict)
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}

// printLogStats prints what the write-ahead log did between two readings: how many
// commits shared each fdatasync is what group commit buys.
func printLogStats(before, after store.LogStats) {
	commits, syncs := after.Commits-before.Commits, after.Syncs-before.Syncs
	if syncs <= 0 {
		return
	}
	fmt.Printf("  %-24s %9d   fdatasyncs for %d commits (%.1f per sync), %s each on average; %d entries to Badger in %d batches, %d deletes of born keys kept from it\n",
		"write-ahead log", syncs, commits, float64(commits)/float64(syncs),
		fmtDur((after.SyncTime-before.SyncTime)/time.Duration(syncs)),
		after.Applied-before.Applied, after.ApplyBatches-before.ApplyBatches, after.Elided-before.Elided)
	fmt.Printf("  %-24s %9d   reads the overlay and the record cache could not answer, %.2f per commit; %d entries in the overlay at the end\n",
		"Badger reads", after.BadgerReads-before.BadgerReads, float64(after.BadgerReads-before.BadgerReads)/float64(commits), after.Overlay)
	sd := after.SyncDurations.Since(before.SyncDurations)
	fmt.Printf("  %-24s %9s   p50 %s p90 %s p99 %s max bucket %s\n", "fdatasync durations", "",
		fmtDur(sd.Quantile(0.50)), fmtDur(sd.Quantile(0.90)), fmtDur(sd.Quantile(0.99)), fmtDur(sd.Quantile(1)))
	q, d := after.CommitQueue.Since(before.CommitQueue), after.CommitDurable.Since(before.CommitDurable)
	fmt.Printf("  %-24s %9s   p50 %s p99 %s waiting for its turn to run; p50 %s p99 %s from a commit's end to its caller hearing it is durable (interpolated in power-of-two buckets)\n",
		"commit waits", "", fmtDur(q.Quantile(0.50)), fmtDur(q.Quantile(0.99)), fmtDur(d.Quantile(0.50)), fmtDur(d.Quantile(0.99)))
}
