package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// The floor scenario asks what the orders targets cost on this machine before any of
// hangar's code runs. It drives internal/floor (a module of its own; see its doc.go)
// with the orders load: a server that does per order the least issue 3 allows (JSON, a
// group-committed log with two durable records, the order's life in its own goroutine
// or actor), first with the cheapest parts there are ("bare": fasthttp, a goroutine
// per order) and then with the parts hangar's design prescribes ("prescribed": Fiber,
// a Hollywood actor per order, Badger behind the log). Runs alternate between the two
// so that the machine's drift falls on both alike.
//
// Any implementation of the issue with the prescribed parts does at least this much
// per order, so where the prescribed floor misses a target, hangar cannot meet it on
// this machine as it is at the time.

// floorVariant is one way of building the floor server.
type floorVariant struct {
	name  string
	flags []string
	what  string
}

var floorVariants = []floorVariant{
	{"bare", nil, "fasthttp, a goroutine per order"},
	{"prescribed", []string{"-fiber", "-actors", "-badger"}, "Fiber, a Hollywood actor per order, Badger behind the log"},
}

func runFloorBench() error {
	dir, err := os.MkdirTemp("", "hangar-bench-floor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "floor")
	t0 := time.Now()
	if err := goBuild(bin, "internal/floor", "."); err != nil {
		return err
	}
	fmt.Printf("  %-24s %9s   per order: JSON, 2 records in a group-committed log (durable before the 201 and before done), nothing else; %d clients, %d orders a run\n",
		"go build internal/floor", fmtDur(time.Since(t0)), cfg.Clients, ordersTotal)
	for _, v := range floorVariants {
		fmt.Printf("  %-24s %9s   %s\n", v.name, "", v.what)
	}
	runs := make([][]orderRates, len(floorVariants))
	var errs []error
	for i := range cfg.OrderRuns {
		for vi, v := range floorVariants {
			r, err := benchFloorRun(bin, dir, v, i+1)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s run %d: %w", v.name, i+1, err))
				continue
			}
			runs[vi] = append(runs[vi], r)
		}
	}
	for vi, v := range floorVariants {
		if len(runs[vi]) == 0 {
			continue
		}
		acc := medianRate(runs[vi], func(r orderRates) float64 { return r.accepted })
		comp := medianRate(runs[vi], func(r orderRates) float64 { return r.completed })
		fmt.Printf("  %-24s %9.0f   median of %d; issue 3's target for hangar, >= %d, %s\n", v.name+" accepted/s", acc, len(runs[vi]), targetAccepted, againstFloor(acc, targetAccepted))
		fmt.Printf("  %-24s %9.0f   median of %d; issue 3's target for hangar, >= %d, %s\n", v.name+" completed/s", comp, len(runs[vi]), targetCompleted, againstFloor(comp, targetCompleted))
	}
	return errors.Join(errs...)
}

func againstFloor(floor float64, target int) string {
	if floor >= float64(target) {
		return "is within this floor"
	}
	return "is ABOVE this floor: out of reach on this machine now"
}

// benchFloorRun starts a fresh floor server, warms it up and measures one run.
func benchFloorRun(bin, dir string, v floorVariant, run int) (orderRates, error) {
	f, err := startFloor(bin, filepath.Join(dir, fmt.Sprintf("%s-%d", v.name, run)), v.flags)
	if err != nil {
		return orderRates{}, err
	}
	defer f.stop()
	load := newOrdersLoad(f.addr, cfg.Clients, ordersUsers)
	if w, _ := load.run(ordersWarmup); w.Errors+w.Non200 > 0 {
		return orderRates{}, fmt.Errorf("warm-up: %d not 201, %d errors", w.Non200, w.Errors)
	}
	if _, _, err := f.waitDone(ordersWarmup); err != nil {
		return orderRates{}, fmt.Errorf("warm-up: %w", err)
	}
	cpu0, floorCPU0 := processCPU(), f.cpu()
	_, syncs0, _ := f.done()
	res, _ := load.run(ordersTotal)
	res.CPU = processCPU() - cpu0 + f.cpu() - floorCPU0
	at, syncs, err := f.waitDone(ordersWarmup + ordersTotal)
	if err != nil {
		return orderRates{}, err
	}
	lifeCPU := processCPU() - cpu0 + f.cpu() - floorCPU0
	printOrderLoad(fmt.Sprintf("%s run %d", v.name, run), res)
	if v.name == "prescribed" {
		// As for hangar: first POST to the last order done, generator included.
		summaryCPU.floor = append(summaryCPU.floor, lifeCPU/ordersTotal)
	}
	r := orderRates{
		accepted:  float64(res.Requests-res.Non200-res.Errors) / res.Elapsed.Seconds(),
		completed: float64(ordersTotal) / at.Sub(load.start).Seconds(),
	}
	fmt.Printf("  %-24s %9.0f   completed/s; %d fdatasyncs for %d records\n", "", r.completed, syncs-syncs0, 2*ordersTotal)
	return r, res.orderCheck()
}

// floorProc is a running floor server.
type floorProc struct {
	cmd    *exec.Cmd
	addr   string
	client *fasthttp.Client
	stderr *bytes.Buffer
}

func startFloor(bin, dir string, flags []string) (*floorProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"-dir", dir, "-secret", ordersSecret}, flags...)...)
	f := &floorProc{cmd: cmd, client: &fasthttp.Client{ReadTimeout: 10 * time.Second}, stderr: &bytes.Buffer{}}
	cmd.Stderr = f.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		f.stop()
		return nil, fmt.Errorf("floor server did not start: %q %v\n%s", line, err, f.stderr)
	}
	f.addr = addr
	return f, nil
}

// done reads how many orders the server has completed and how many fdatasyncs its log
// has made.
func (f *floorProc) done() (completed, syncs int64, err error) {
	status, body, err := f.client.Get(nil, "http://"+f.addr+"/done")
	if err != nil {
		return 0, 0, err
	}
	if status != fasthttp.StatusOK {
		return 0, 0, fmt.Errorf("GET /done: %d %s", status, body)
	}
	if _, err := fmt.Sscan(string(body), &completed, &syncs); err != nil {
		return 0, 0, fmt.Errorf("GET /done: %q: %w", body, err)
	}
	return completed, syncs, nil
}

// waitDone polls until n orders are done and returns when it saw them so (within a
// millisecond of polling).
func (f *floorProc) waitDone(n int64) (time.Time, int64, error) {
	deadline := time.Now().Add(ordersDrainLimit)
	for {
		completed, syncs, err := f.done()
		if err != nil {
			return time.Time{}, 0, err
		}
		if completed >= n {
			return time.Now(), syncs, nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, 0, fmt.Errorf("only %d of %d orders done after %s", completed, n, ordersDrainLimit)
		}
		time.Sleep(time.Millisecond)
	}
}

// cpu is the CPU time (user and system) the floor server has used so far.
func (f *floorProc) cpu() time.Duration { return pidCPU(f.cmd.Process.Pid) }

func (f *floorProc) stop() {
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { _ = f.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = f.cmd.Process.Kill()
		<-exited
	}
}
