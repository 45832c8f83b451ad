package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// The floor scenario asks what the orders targets cost on this machine before any of
// hangar's code runs. It serves POST /orders with the least that issue 3 allows, each
// part the cheapest of its kind:
//
//   - fasthttp with one handler (no Fiber routing or middleware, no metrics);
//   - a constant-time bearer check and the order's JSON decoded into a struct;
//   - one record appended to a group-committed log (one write and one fdatasync for
//     every order waiting), durable before the 201;
//   - a goroutine per order (cheaper than a Hollywood actor) that "provisions" with no
//     work and appends the outcome to the same log, durable before it counts as done.
//
// No status index, no start record, no funds, no Badger, no queue bookkeeping. Any
// implementation of the issue does at least this much per order, so the figures bound
// hangar's from above: where the floor misses a target, hangar cannot meet it here.

const floorLogSize = 64 << 20 // preallocated, as hangar's log segments are

func runFloorBench() error {
	fmt.Printf("  the least any implementation does per order: fasthttp, JSON, a group-committed log (2 durable records per order), a goroutine per order; %d clients, %d orders\n",
		cfg.Clients, ordersTotal)
	var runs []orderRates
	var errs []error
	for i := range cfg.OrderRuns {
		r, err := benchFloorRun(i + 1)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %d: %w", i+1, err))
			continue
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return errors.Join(errs...)
	}
	median := func(rate func(orderRates) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = rate(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	acc, comp := median(func(r orderRates) float64 { return r.accepted }), median(func(r orderRates) float64 { return r.completed })
	fmt.Printf("  %-24s %9.0f   median of %d; issue 3's target for hangar >= %d: %s\n", "floor accepted/s", acc, len(runs), targetAccepted, reachable(acc, targetAccepted))
	fmt.Printf("  %-24s %9.0f   median of %d; issue 3's target for hangar >= %d: %s\n", "floor completed/s", comp, len(runs), targetCompleted, reachable(comp, targetCompleted))
	return errors.Join(errs...)
}

func reachable(floor float64, target int) string {
	if floor >= float64(target) {
		return "within the floor"
	}
	return "above the floor, out of reach on this machine now"
}

func benchFloorRun(run int) (orderRates, error) {
	log, err := openGroupLog()
	if err != nil {
		return orderRates{}, err
	}
	defer log.close()
	srv := newFloorServer(log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return orderRates{}, err
	}
	hs := &fasthttp.Server{Handler: srv.handle}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln)
	}()
	defer func() {
		_ = hs.Shutdown()
		<-served
	}()

	load := newOrdersLoad(ln.Addr().String(), cfg.Clients, ordersUsers)
	if w, _ := load.run(ordersWarmup); w.Errors+w.Non200 > 0 {
		return orderRates{}, fmt.Errorf("warm-up: %d not 201, %d errors", w.Non200, w.Errors)
	}
	srv.waitDone(ordersWarmup)
	done := srv.doneAt(ordersWarmup + ordersTotal)
	cpu0 := processCPU()
	syncs0 := log.syncs.Load()
	res, _ := load.run(ordersTotal)
	res.CPU = processCPU() - cpu0
	var at time.Time
	select {
	case at = <-done:
	case <-time.After(ordersDrainLimit):
		return orderRates{}, fmt.Errorf("only %d of %d orders done after %s", srv.completed.Load()-ordersWarmup, ordersTotal, ordersDrainLimit)
	}
	if err := log.failed(); err != nil {
		return orderRates{}, err
	}
	printOrderLoad(fmt.Sprintf("floor run %d accepted", run), res)
	r := orderRates{
		accepted:  float64(res.Requests-res.Non200-res.Errors) / res.Elapsed.Seconds(),
		completed: float64(ordersTotal) / at.Sub(load.start).Seconds(),
	}
	fmt.Printf("  %-24s %9.0f   completed/s; %d fdatasyncs for %d records\n", "", r.completed, log.syncs.Load()-syncs0, 2*ordersTotal)
	return r, res.orderCheck()
}

// floorServer answers POST /orders with the floor's work.
type floorServer struct {
	log       *groupLog
	secret    []byte
	nextID    atomic.Int64
	completed atomic.Int64
	mu        sync.Mutex
	waiters   map[int64]chan time.Time // completed count → who waits for it
}

func newFloorServer(log *groupLog) *floorServer {
	return &floorServer{log: log, secret: []byte("Bearer " + ordersSecret), waiters: map[int64]chan time.Time{}}
}

type floorOrder struct {
	UserID         int64  `json:"user_id"`
	TelegramUserID int64  `json:"telegram_user_id"`
	SpecID         string `json:"spec_id"`
	Region         string `json:"region"`
}

func (s *floorServer) handle(c *fasthttp.RequestCtx) {
	if subtle.ConstantTimeCompare(c.Request.Header.Peek("Authorization"), s.secret) != 1 {
		c.SetStatusCode(fasthttp.StatusUnauthorized)
		return
	}
	var o floorOrder
	if err := json.Unmarshal(c.PostBody(), &o); err != nil || o.UserID == 0 || o.SpecID == "" {
		c.SetStatusCode(fasthttp.StatusBadRequest)
		return
	}
	id := s.nextID.Add(1)
	if err := s.log.append(floorRecord(id, "pending", o)); err != nil {
		c.SetStatusCode(fasthttp.StatusInternalServerError)
		return
	}
	go s.provision(id, o)
	c.SetStatusCode(fasthttp.StatusCreated)
	c.SetContentType("application/json")
	body := strconv.AppendInt(append(c.Response.Body()[:0], `{"order_id":`...), id, 10)
	c.SetBody(append(body, `,"status":"pending"}`...))
}

// provision is the order's own lifecycle: no provider work, its outcome made durable.
func (s *floorServer) provision(id int64, o floorOrder) {
	if err := s.log.append(floorRecord(id, "active", o)); err != nil {
		return
	}
	n := s.completed.Add(1)
	s.mu.Lock()
	if ch, ok := s.waiters[n]; ok {
		ch <- time.Now()
		delete(s.waiters, n)
	}
	s.mu.Unlock()
}

// doneAt returns a channel that gets the time the n-th order completes.
func (s *floorServer) doneAt(n int64) <-chan time.Time {
	ch := make(chan time.Time, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.completed.Load() >= n {
		ch <- time.Now()
	} else {
		s.waiters[n] = ch
	}
	return ch
}

func (s *floorServer) waitDone(n int64) {
	select {
	case <-s.doneAt(n):
	case <-time.After(ordersDrainLimit):
	}
}

// floorRecord is an order record about the size of hangar's.
func floorRecord(id int64, status string, o floorOrder) []byte {
	b := make([]byte, 0, 160)
	b = strconv.AppendInt(append(b, `{"id":`...), id, 10)
	b = append(append(append(b, `,"status":"`...), status...), `","user_id":`...)
	b = strconv.AppendInt(b, o.UserID, 10)
	b = strconv.AppendInt(append(b, `,"telegram_user_id":`...), o.TelegramUserID, 10)
	b = append(append(append(b, `,"spec_id":"`...), o.SpecID...), `","region":"`...)
	b = append(append(b, o.Region...), `","price_paid":5000,"created_at":"2026-11-30T00:00:00Z"}`+"\n"...)
	return b
}

// groupLog is a write-ahead log with group commit: appenders queue their records and
// wait; one writer writes everything queued with one write and one fdatasync, then
// releases every appender it covered.
type groupLog struct {
	f       *os.File
	mu      sync.Mutex
	buf     []byte
	waiters []chan error
	kick    chan struct{}
	off     int64
	syncs   atomic.Int64
	err     atomic.Pointer[error]
	stop    chan struct{}
	stopped chan struct{}
}

func openGroupLog() (*groupLog, error) {
	f, err := os.CreateTemp("", "hangar-bench-floor-")
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(make([]byte, floorLogSize)); err == nil {
		err = unix.Fdatasync(int(f.Fd()))
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	l := &groupLog{f: f, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.writer()
	return l, nil
}

func (l *groupLog) append(rec []byte) error {
	ch := make(chan error, 1)
	l.mu.Lock()
	l.buf = append(l.buf, rec...)
	l.waiters = append(l.waiters, ch)
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	return <-ch
}

func (l *groupLog) writer() {
	defer close(l.stopped)
	var buf []byte
	var waiters []chan error
	for {
		select {
		case <-l.kick:
		case <-l.stop:
			return
		}
		l.mu.Lock()
		buf, l.buf = l.buf, buf[:0]
		waiters, l.waiters = l.waiters, waiters[:0]
		l.mu.Unlock()
		if len(waiters) == 0 {
			continue
		}
		err := l.write(buf)
		for _, ch := range waiters {
			ch <- err
		}
	}
}

func (l *groupLog) write(buf []byte) error {
	if l.off+int64(len(buf)) > floorLogSize {
		l.off = 0 // the run's records fit many times over; wrapping keeps the file preallocated
	}
	if _, err := l.f.WriteAt(buf, l.off); err != nil {
		l.err.Store(&err)
		return err
	}
	l.off += int64(len(buf))
	l.syncs.Add(1)
	if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
		l.err.Store(&err)
		return err
	}
	return nil
}

func (l *groupLog) failed() error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *groupLog) close() {
	close(l.stop)
	<-l.stopped
	l.f.Close()
	os.Remove(l.f.Name())
}
