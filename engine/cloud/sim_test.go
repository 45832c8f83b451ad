package cloud_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
)

func simReq(label string) cloud.CreateRequest {
	return cloud.CreateRequest{Label: label, Region: "ap-northeast", Plan: "sim-small", RootPassword: rootPass}
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func TestSimLifecycle(t *testing.T) {
	ctx := t.Context()
	s := cloud.NewSim(cloud.SimConfig{Rand: seeded(1)})
	in, err := s.Create(ctx, simReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	if !in.Ready() || !strings.HasPrefix(in.IPv4, "203.0.113.") || in.Label != "hangar-order-1" || in.Plan != "sim-small" {
		t.Fatalf("created %+v", in)
	}
	if found, ok, err := s.FindByLabel(ctx, "hangar-order-1"); err != nil || !ok || found != in {
		t.Fatalf("FindByLabel = %+v, %v, %v", found, ok, err)
	}
	if got, err := s.Get(ctx, in.ID); err != nil || got != in {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if err := s.Delete(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, in.ID); err != nil {
		t.Errorf("deleting a missing instance = %v", err)
	}
	if _, ok, _ := s.FindByLabel(ctx, "hangar-order-1"); ok {
		t.Error("deleted instance still found by label")
	}
	if _, err := s.Get(ctx, in.ID); !cloud.IsNotFound(err) || !cloud.IsPermanent(err) {
		t.Errorf("Get after Delete = %v", err)
	}
}

func TestSimIdempotentByLabel(t *testing.T) {
	s := cloud.NewSim(cloud.SimConfig{LatencyMin: time.Millisecond, LatencyMax: 3 * time.Millisecond, Rand: seeded(2)})
	const callers = 50
	ids := make([]string, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			in, err := s.Create(t.Context(), simReq("hangar-order-9"))
			if err != nil {
				t.Error(err)
			}
			ids[i] = in.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent creates for one label returned %q and %q", ids[0], id)
		}
	}
	if s.Count() != 1 {
		t.Fatalf("%d instances for one label", s.Count())
	}
	other, err := s.Create(t.Context(), simReq("hangar-order-10"))
	if err != nil || other.ID == ids[0] || other.IPv4 == "" {
		t.Fatalf("a second label = %+v, %v", other, err)
	}
}

func TestSimLatencyRange(t *testing.T) {
	const lo, hi = time.Millisecond, 5 * time.Millisecond
	s := cloud.NewSim(cloud.SimConfig{LatencyMin: lo, LatencyMax: hi, Rand: seeded(3)})
	for i := range 20 {
		start := time.Now()
		if _, err := s.Create(t.Context(), simReq(fmt.Sprint("lat-", i))); err != nil {
			t.Fatal(err)
		}
		// Timers never fire early; the upper bound leaves room for a loaded machine.
		if d := time.Since(start); d < lo || d > hi+500*time.Millisecond {
			t.Errorf("create took %v, want within [%v, %v]", d, lo, hi)
		}
	}
}

func TestSimFailRate(t *testing.T) {
	for _, tc := range []struct {
		rate         float64
		wantFailures func(n int) bool
	}{
		{rate: 0, wantFailures: func(n int) bool { return n == 0 }},
		{rate: 1, wantFailures: func(n int) bool { return n == 200 }},
		{rate: 0.5, wantFailures: func(n int) bool { return n > 50 && n < 150 }},
	} {
		t.Run(fmt.Sprint(tc.rate), func(t *testing.T) {
			s := cloud.NewSim(cloud.SimConfig{FailRate: tc.rate, Rand: seeded(4)})
			failures := 0
			for i := range 200 {
				_, err := s.Create(t.Context(), simReq(fmt.Sprint("f-", i)))
				if err == nil {
					continue
				}
				failures++
				var ce *cloud.Error
				if !cloud.IsRetryable(err) || cloud.IsPermanent(err) || !errors.As(err, &ce) || ce.Status != 503 ||
					!strings.Contains(err.Error(), "(simulated)") {
					t.Fatalf("simulated failure %v is not a retryable 503", err)
				}
			}
			if !tc.wantFailures(failures) {
				t.Errorf("%d of 200 creates failed at rate %v", failures, tc.rate)
			}
			if s.Count() != 200-failures {
				t.Errorf("%d instances after %d successes", s.Count(), 200-failures)
			}
		})
	}
}

func TestSimInvalidPlanIsPermanent(t *testing.T) {
	s := cloud.NewSim(cloud.SimConfig{LatencyMin: time.Hour, LatencyMax: time.Hour})
	for _, req := range []cloud.CreateRequest{
		{Label: "x", Region: "ap-northeast", Plan: cloud.SimInvalid},
		{Label: "x", Region: cloud.SimInvalid, Plan: "sim-small"},
		{Label: "", Region: "ap-northeast", Plan: "sim-small"},
	} {
		if _, err := s.Create(t.Context(), req); !cloud.IsPermanent(err) {
			t.Errorf("Create(%+v) = %v, want permanent at once", req, err)
		}
	}
}

func TestSimCancellation(t *testing.T) {
	s := cloud.NewSim(cloud.SimConfig{LatencyMin: time.Hour, LatencyMax: time.Hour})

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := s.Create(ctx, simReq("c-1"))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || cloud.IsRetryable(err) || cloud.IsPermanent(err) {
			t.Errorf("cancelled create = %v, want a cancellation, neither retryable nor permanent", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("cancelled create did not return")
	}

	dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer dcancel()
	if _, err := s.Create(dctx, simReq("c-2")); !cloud.IsRetryable(err) {
		t.Errorf("create past its deadline = %v, want retryable", err)
	}
	if s.Count() != 0 {
		t.Errorf("an interrupted create left %d instances", s.Count())
	}
}

// TestSimManyInFlight checks the simulator carries a flood of concurrent creates with
// only the callers' goroutines waiting.
func TestSimManyInFlight(t *testing.T) {
	n := 10_000
	if raceEnabled {
		n = 5_000
	}
	s := cloud.NewSim(cloud.SimConfig{LatencyMin: 50 * time.Millisecond, LatencyMax: 100 * time.Millisecond, Rand: seeded(5)})
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := s.Create(t.Context(), simReq(fmt.Sprint("m-", i))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s.Count() != n {
		t.Fatalf("%d instances after %d creates", s.Count(), n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("%d concurrent creates took %v", n, d)
	}
}

func TestParseLatency(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi time.Duration
		bad    bool
	}{
		{in: "15s-30s", lo: 15 * time.Second, hi: 30 * time.Second},
		{in: " 1ms - 5ms ", lo: time.Millisecond, hi: 5 * time.Millisecond},
		{in: "20s", lo: 20 * time.Second, hi: 20 * time.Second},
		{in: "0", lo: 0, hi: 0},
		{in: "0-2s", lo: 0, hi: 2 * time.Second},
		{in: "5s-5s", lo: 5 * time.Second, hi: 5 * time.Second},
		{in: "", bad: true},
		{in: "fast", bad: true},
		{in: "30s-15s", bad: true},
		{in: "-5s", bad: true},
		{in: "5s-", bad: true},
		{in: "1s-2s-3s", bad: true},
		{in: "15", bad: true},
	} {
		lo, hi, err := cloud.ParseLatency(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseLatency(%q) = %v, %v; want an error", tc.in, lo, hi)
			}
			continue
		}
		if err != nil || lo != tc.lo || hi != tc.hi {
			t.Errorf("ParseLatency(%q) = %v, %v, %v; want %v, %v", tc.in, lo, hi, err, tc.lo, tc.hi)
		}
	}
}
