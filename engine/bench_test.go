package engine

import (
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// lifecycleRun and lifecycleDone are the least an order actor's life can carry: one
// message in, one report out.
type (
	lifecycleRun  struct{}
	lifecycleDone struct{}
)

type lifecycleActor struct{ report *actor.PID }

func (a *lifecycleActor) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Started, actor.Stopped:
	case lifecycleRun:
		c.Send(a.report, lifecycleDone{})
		c.Engine().Poison(c.PID())
	}
}

type lifecycleCollector struct{ wg *sync.WaitGroup }

func (a *lifecycleCollector) Receive(c *actor.Context) {
	if _, ok := c.Message().(lifecycleDone); ok {
		a.wg.Done()
	}
}

// BenchmarkOrderActorLifecycle is what one actor per order costs in Hollywood before
// it does any work: spawned with the dispatcher's options, one message in, one report
// out, poisoned. make bench prints it beside the floor scenario; cpu-µs/op counts every
// goroutine the lifecycle wakes (registry, inbox, event stream), where ns/op is wall
// time on however many cores there are.
func BenchmarkOrderActorLifecycle(b *testing.B) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	collector := e.Spawn(func() actor.Receiver { return &lifecycleCollector{wg: &wg} }, "collector")
	producer := func() actor.Receiver { return &lifecycleActor{report: collector} }
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	wg.Add(b.N)
	for i := range b.N {
		pid := e.Spawn(producer, "order", actor.WithID(strconv.Itoa(i)), actor.WithInboxSize(4), actor.WithMaxRestarts(0))
		e.Send(pid, lifecycleRun{})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time (user and system) this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
