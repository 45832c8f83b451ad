package http

import (
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	// children caches the vecs' resolved children so that a request costs one map
	// lookup instead of hashing its label values into both vecs. Routes are the fixed
	// set of registered Fiber paths (the middleware always runs inside a matched
	// route, so a request path never becomes a key) and statuses are few, so the map
	// stops growing soon after start; it is copied on write so that reads take no lock.
	// Nothing deletes from the vecs, so a cached child is always the one exported.
	children atomic.Pointer[map[routeStatus]routeChildren]
	addMu    sync.Mutex
}

type routeStatus struct {
	route  string
	status int
}

type routeChildren struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hangar_http_request_seconds", Help: "HTTP request latency by route.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"route"}),
	}
	m.children.Store(&map[routeStatus]routeChildren{})
	reg.MustRegister(m.requests, m.latency)
	return m
}

func (m *httpMetrics) middleware(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	status := c.Response().StatusCode()
	if err != nil {
		// The error handler has not run yet: predict its status for the label.
		if ae, ok := err.(*apiError); ok {
			status = ae.status
		} else if fe, ok := err.(*fiber.Error); ok {
			status = fe.Code
		} else {
			status = fiber.StatusInternalServerError
		}
	}
	ch := m.childrenFor(c.Route().Path, status)
	ch.requests.Inc()
	ch.latency.Observe(time.Since(start).Seconds())
	return err
}

func (m *httpMetrics) childrenFor(route string, status int) routeChildren {
	if ch, ok := (*m.children.Load())[routeStatus{route, status}]; ok {
		return ch
	}
	return m.addChildren(route, status)
}

func (m *httpMetrics) addChildren(route string, status int) routeChildren {
	m.addMu.Lock()
	defer m.addMu.Unlock()
	k := routeStatus{route, status}
	old := *m.children.Load()
	if ch, ok := old[k]; ok {
		return ch
	}
	ch := routeChildren{
		requests: m.requests.WithLabelValues(route, strconv.Itoa(status)),
		latency:  m.latency.WithLabelValues(route),
	}
	next := make(map[routeStatus]routeChildren, len(old)+1)
	maps.Copy(next, old)
	next[k] = ch
	m.children.Store(&next)
	return ch
}
