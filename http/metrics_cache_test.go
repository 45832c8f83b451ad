package http

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// The cached children must count exactly what WithLabelValues per request counted:
// the same series names, route and code labels, and counts, under concurrent requests.
func TestHTTPMetricsCachedChildrenCountAsBefore(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newHTTPMetrics(reg)
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: errorHandler(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	app.Use(m.middleware)
	app.Get("/ok", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/items/:id", func(c *fiber.Ctx) error {
		if c.Params("id") == "new" {
			return c.SendStatus(fiber.StatusCreated)
		}
		return c.SendString(c.Params("id"))
	})
	app.Get("/bad", func(*fiber.Ctx) error { return badRequest("bad", "a sentence") })
	app.Get("/gone", func(*fiber.Ctx) error { return fiber.NewError(fiber.StatusGone, "gone") })
	app.Get("/boom", func(*fiber.Ctx) error { return errors.New("boom") })

	requests := []struct {
		path   string
		route  string
		status int
	}{
		{"/ok", "/ok", 200},
		{"/items/1", "/items/:id", 200},
		{"/items/2", "/items/:id", 200},
		{"/items/new", "/items/:id", 201},
		{"/bad", "/bad", 400},
		{"/gone", "/gone", 410},
		{"/boom", "/boom", 500},
		// An unknown path is labelled with the middleware's own route, never with the
		// request path, so it cannot grow the cache.
		{"/nowhere/1", "/", 404},
		{"/nowhere/2", "/", 404},
	}
	const rounds, workers = 5, 4
	want := map[[2]string]uint64{}
	wantLatency := map[string]uint64{}
	for _, r := range requests {
		want[[2]string{r.route, strconv.Itoa(r.status)}] += rounds * workers
		wantLatency[r.route] += rounds * workers
	}

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				for _, r := range requests {
					resp, err := app.Test(httptest.NewRequest(http.MethodGet, r.path, nil))
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != r.status {
						t.Errorf("%s answered %d, want %d", r.path, resp.StatusCode, r.status)
					}
				}
			}
		})
	}
	wg.Wait()

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[[2]string]uint64{}
	gotLatency := map[string]uint64{}
	for _, mf := range families {
		for _, s := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetName() {
			case "hangar_http_requests_total":
				if len(labels) != 2 {
					t.Fatalf("requests series has labels %v, want route and code", labels)
				}
				got[[2]string{labels["route"], labels["code"]}] = uint64(s.GetCounter().GetValue())
			case "hangar_http_request_seconds":
				if len(labels) != 1 {
					t.Fatalf("latency series has labels %v, want route", labels)
				}
				gotLatency[labels["route"]] = s.GetHistogram().GetSampleCount()
			default:
				t.Fatalf("unexpected metric %s", mf.GetName())
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("requests series = %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("requests{route=%q,code=%q} = %d, want %d", k[0], k[1], got[k], n)
		}
	}
	if len(gotLatency) != len(wantLatency) {
		t.Errorf("latency series = %v, want %v", gotLatency, wantLatency)
	}
	for route, n := range wantLatency {
		if gotLatency[route] != n {
			t.Errorf("latency{route=%q} count = %d, want %d", route, gotLatency[route], n)
		}
	}
	if n := len(*m.children.Load()); n != len(want) {
		t.Errorf("cache holds %d children, want one per route and status (%d)", n, len(want))
	}
}

// A cached child is the very child the vec exports, so nothing counted is lost.
func TestHTTPMetricsChildrenAreTheVecs(t *testing.T) {
	m := newHTTPMetrics(prometheus.NewRegistry())
	tests := []struct {
		route  string
		status int
	}{{"/webhook", 200}, {"/webhook", 503}, {"/api/views/*", 200}}
	for _, tt := range tests {
		first := m.childrenFor(tt.route, tt.status)
		again := m.childrenFor(tt.route, tt.status)
		if first != again {
			t.Errorf("%s %d: a second lookup resolved a different child", tt.route, tt.status)
		}
		if first.requests != m.requests.WithLabelValues(tt.route, strconv.Itoa(tt.status)) {
			t.Errorf("%s %d: cached counter is not the vec's", tt.route, tt.status)
		}
		if first.latency != m.latency.WithLabelValues(tt.route) {
			t.Errorf("%s: cached observer is not the vec's", tt.route)
		}
	}
}

// BenchmarkHTTPMetricsLabels compares resolving the children per request (as the
// middleware did) with the cache lookup it does now.
func BenchmarkHTTPMetricsLabels(b *testing.B) {
	m := newHTTPMetrics(prometheus.NewRegistry())
	const route, status = "/api/views/*", 200
	b.Run("WithLabelValues", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
			m.latency.WithLabelValues(route).Observe(0.001)
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ch := m.childrenFor(route, status)
			ch.requests.Inc()
			ch.latency.Observe(0.001)
		}
	})
}
