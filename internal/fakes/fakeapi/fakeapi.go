package fakeapi

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

type faultKind int

const (
	faultStatus faultKind = iota
	faultHang
)

type fault struct {
	kind       faultKind
	status     int
	retryAfter time.Duration
}

// Base holds a fake's faults, latency and request log. R is the fake's own record of a
// request, so each fake decides how much of a request it keeps (never headers or body).
type Base[R any] struct {
	record  func(*http.Request) R
	closing chan struct{}
	once    sync.Once

	// mu is the Base's own: Wait's condition calls into the fake, which may call Notify,
	// so mu is never held while calling out.
	mu          sync.Mutex
	latency     time.Duration
	faults      []fault
	createHangs int
	requests    []R
	changed     chan struct{}
}

// New makes a Base that records each request as record says.
func New[R any](record func(*http.Request) R) *Base[R] {
	return &Base[R]{record: record, closing: make(chan struct{}), changed: make(chan struct{})}
}

// SetLatency delays every later answer by d.
func (b *Base[R]) SetLatency(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.latency = d
}

// FailNext answers the next n requests with status (e.g. 500, 503, or a 4xx) and the
// provider's error body.
func (b *Base[R]) FailNext(n, status int) { b.inject(n, fault{kind: faultStatus, status: status}) }

// RateLimitNext answers the next n requests with 429 and Retry-After in whole seconds.
func (b *Base[R]) RateLimitNext(n int, retryAfter time.Duration) {
	b.inject(n, fault{kind: faultStatus, status: http.StatusTooManyRequests, retryAfter: retryAfter})
}

// HangNext holds the next n requests without answering until the client gives up or
// the server closes: a timeout, as the client sees it.
func (b *Base[R]) HangNext(n int) { b.inject(n, fault{kind: faultHang}) }

// CreateThenHang makes the next n creates store their instance and then hang like
// HangNext: the server exists, but the client never hears of it.
func (b *Base[R]) CreateThenHang(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.createHangs += n
}

func (b *Base[R]) inject(n int, f fault) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range n {
		b.faults = append(b.faults, f)
	}
}

// Requests returns every request received so far, in arrival order.
func (b *Base[R]) Requests() []R {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// Wait blocks until cond holds or timeout passes, re-checking whenever a request
// arrives or an instance changes. cond may call the fake's methods.
func (b *Base[R]) Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// Taken before cond runs, so a change cond misses still closes ch.
		b.mu.Lock()
		ch := b.changed
		b.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return cond()
		}
	}
}

// Notify wakes Wait; a fake calls it after changing its instances.
func (b *Base[R]) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notifyLocked()
}

func (b *Base[R]) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// TakeCreateHang reports whether the create being served should hang after storing
// its instance (see CreateThenHang), using up one such fault if so.
func (b *Base[R]) TakeCreateHang() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.createHangs == 0 {
		return false
	}
	b.createHangs--
	return true
}

// Front records the request, applies latency and injected faults, and only then hands
// the request to next. fail writes the provider's error body for an injected status.
func (b *Base[R]) Front(next http.Handler, fail func(w http.ResponseWriter, status int)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.requests = append(b.requests, b.record(r))
		latency := b.latency
		var f *fault
		if len(b.faults) > 0 {
			f = &b.faults[0]
			b.faults = b.faults[1:]
		}
		b.notifyLocked()
		b.mu.Unlock()

		if !b.pause(r, latency) {
			panic(http.ErrAbortHandler)
		}
		if f != nil {
			switch f.kind {
			case faultHang:
				b.Hang(r)
			case faultStatus:
				if f.retryAfter > 0 {
					w.Header().Set("Retry-After", strconv.Itoa(int((f.retryAfter+time.Second-1)/time.Second)))
				}
				fail(w, f.status)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// pause waits d; false means the client left or the server is closing.
func (b *Base[R]) pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-b.closing:
	}
	return false
}

// Hang holds the request until the client gives up or the server closes, then drops
// the connection without an answer.
func (b *Base[R]) Hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-b.closing:
	}
	panic(http.ErrAbortHandler)
}

// Release lets hanging and delayed requests go; a fake calls it before closing its
// server, which would otherwise wait for them.
func (b *Base[R]) Release() { b.once.Do(func() { close(b.closing) }) }
