package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// The machine scenario measures what no hangar code is in: the same load generator
// against an HTTP server that does nothing, and fdatasync on an idle log file. They
// are the floor under the other figures, and say how busy the shared machine is.
const (
	machineWarmup   = time.Second
	machineDuration = 3 * time.Second
	machineSyncSize = 4 << 10
)

func runMachineBench() error {
	res, err := benchCeiling()
	if err != nil {
		return err
	}
	fmt.Printf("  loopback ceiling: the views load (%d clients) against fasthttp answering fixed JSON, no hangar code\n", cfg.Clients)
	res.print("ceiling")
	lat, err := benchFdatasync(machineDuration)
	if err != nil {
		return err
	}
	slices.Sort(lat)
	sorted := loadResult{Latencies: lat}
	fmt.Printf("  fdatasync alone: one writer overwriting %d KiB blocks of a zero-filled file in %s\n", machineSyncSize>>10, os.TempDir())
	fmt.Printf("  %-24s %9.0f syncs/s p50 %9s   p99 %9s\n", "fdatasync",
		float64(len(lat))/machineDuration.Seconds(), fmtDur(sorted.Percentile(0.50)), fmtDur(sorted.Percentile(0.99)))
	return res.check("ceiling")
}

// benchCeiling is the views load against a server with no work in it.
func benchCeiling() (loadResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return loadResult{}, err
	}
	body := []byte(`{"slug":"2026/post-1","total":12,"counted":true}`)
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		c.SetContentType("application/json")
		c.SetBody(body)
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	defer func() {
		_ = srv.Shutdown()
		<-done
	}()
	l := newViewsLoad(ln.Addr().String(), viewsBenchConfig{Clients: cfg.Clients, IPs: viewsIPs, Slugs: viewsSlugs})
	ctx := context.Background()
	runLoad(ctx, cfg.Clients, machineWarmup, l.do)
	return runLoad(ctx, cfg.Clients, machineDuration, l.do), nil
}

// benchFdatasync times write+fdatasync of one block at a time, as the log's writer does
// on a preallocated segment, with nothing else running.
func benchFdatasync(dur time.Duration) ([]time.Duration, error) {
	f, err := os.CreateTemp("", "hangar-bench-sync-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	const size = 16 << 20
	if _, err := f.Write(make([]byte, size)); err != nil {
		return nil, err
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return nil, err
	}
	block := make([]byte, machineSyncSize)
	var lat []time.Duration
	var off int64
	for end := time.Now().Add(dur); time.Now().Before(end); off = (off + machineSyncSize) % size {
		start := time.Now()
		if _, err := f.WriteAt(block, off); err != nil {
			return nil, err
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(start))
	}
	return lat, nil
}
