package main

import (
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// The demo's orders, drawn as its loop draws them over an hour, stay well under what
// the simulator completes, so a fresh `make run` builds no backlog and raises no
// alarm; storm stays above it, to show the alarms on purpose.
func TestDemoOrdersStayUnderTheSimulatorsCapacity(t *testing.T) {
	def := queueConfig{MaxConcurrency: 5, SimLatency: "15s-30s", SimFailRate: 0.1}
	for _, tc := range []struct {
		name  string
		mode  demoMode
		q     queueConfig
		storm bool
	}{
		{"the defaults", demoOn, def, false},
		{"one at a time", demoOn, queueConfig{MaxConcurrency: 1, SimLatency: "15s-30s", SimFailRate: 0.1}, false},
		{"half the attempts fail", demoOn, queueConfig{MaxConcurrency: 5, SimLatency: "15s-30s", SimFailRate: 0.5}, false},
		{"a fast simulator", demoOn, queueConfig{MaxConcurrency: 5, SimLatency: "100ms", SimFailRate: 0}, false},
		{"storm at the defaults", demoStorm, def, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			capacity := simCapacity(tc.q)
			lo, hi := demoOrderEvery(tc.mode, tc.q)
			rnd := rand.New(rand.NewPCG(1, 2))
			var elapsed time.Duration
			orders := 0
			for elapsed < time.Hour {
				elapsed += lo + time.Duration(rnd.Float64()*float64(hi-lo))
				orders++
			}
			rate := float64(orders) / time.Hour.Seconds()
			// Even at the shortest wait every time the queue would keep up.
			burst := 1 / lo.Seconds()
			t.Logf("simulator %.3f/s, demo %.3f/s (at most %.3f/s), waits %v-%v", capacity, rate, burst, lo, hi)
			if tc.storm {
				if rate <= capacity {
					t.Fatalf("storm orders %.3f/s, under the simulator's %.3f/s: no alarm to show", rate, capacity)
				}
				return
			}
			if rate > 0.5*capacity || burst >= capacity {
				t.Fatalf("demo orders %.3f/s (at most %.3f/s) against a simulator completing %.3f/s", rate, burst, capacity)
			}
			if rate > 0.55 { // never faster than about one order per 2 s, whatever the simulator
				t.Fatalf("demo orders %.3f/s", rate)
			}
		})
	}
	if c := simCapacity(def); c < 0.19 || c > 0.21 {
		t.Fatalf("the default simulator completes %.3f orders/s; want about 0.2", c)
	}
}

func TestDemoFlag(t *testing.T) {
	for _, tc := range []struct {
		args, env string
		want      demoMode
		err       bool
	}{
		{"", "", demoOff, false},
		{"--demo", "", demoOn, false},
		{"--demo=storm", "", demoStorm, false},
		{"--demo=false", "storm", demoOff, false},
		{"", "true", demoOn, false},
		{"", "STORM", demoStorm, false},
		{"", "0", demoOff, false},
		{"--demo=tornado", "", demoOff, true},
		{"", "tornado", demoOff, true},
	} {
		t.Run(tc.args+"|"+tc.env, func(t *testing.T) {
			t.Setenv("HANGAR_DEMO", tc.env)
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(new(nopWriter))
			f := &envFlags{fs: fs}
			var m demoMode
			addDemoFlag(f, &m)
			var args []string
			if tc.args != "" {
				args = []string{tc.args}
			}
			err := fs.Parse(args)
			if len(f.errs) > 0 {
				err = f.errs[0]
			}
			if (err != nil) != tc.err || (!tc.err && m != tc.want) {
				t.Fatalf("got %q, %v; want %q (error %v)", m, err, tc.want, tc.err)
			}
		})
	}
}

type nopWriter struct{}

func (*nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// Without a client-IP header the demo's readers reach the daemon from different
// loopback addresses, one connection each.
func TestDemoViewsComeFromVariedLoopbackAddresses(t *testing.T) {
	hc := viewClient()
	if hc == nil {
		t.Skip("this system has only 127.0.0.1")
	}
	seen := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		seen <- host
	}))
	defer srv.Close()
	for i := range 3 {
		ctx := context.WithValue(context.Background(), visitorKey{}, visitorIP(i*7, false))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got, want := <-seen, visitorIP(i*7, false).String(); got != want {
			t.Fatalf("view %d came from %s, want %s", i, got, want)
		}
	}
}

// The demo's blog views reach a real daemon with the geo headers it is configured to
// read and from several addresses: the console's blog view and map have something to
// show after a `make run` with no client-IP header set.
func TestDemoFillsTheBlogView(t *testing.T) {
	if viewClient() == nil {
		t.Skip("this system has only 127.0.0.1")
	}
	d := startDaemon(t, t.TempDir(), "HANGAR_DEMO=on", "HANGAR_GEO_COUNTRY_HEADER=X-Geo-Country",
		"HANGAR_GEO_CITY_HEADER=X-Geo-City", "HANGAR_SIM_LATENCY=100ms")
	var stats api.BlogStats
	hangartest.WaitFor(t, 20*time.Second, "demo views from three readers with a place", func() bool {
		r := hangartest.Do(t, http.MethodGet, d.URL+"/api/admin/stats", nil, "Authorization", "Bearer "+hangartest.AdminToken)
		stats = api.BlogStats{}
		if err := json.Unmarshal(r.Body, &stats); err != nil {
			return false
		}
		ips := map[string]bool{}
		for _, v := range stats.RecentVisitors {
			if v.Country != "" && v.City != "" && v.IP != "127.0.0.1" {
				ips[v.IP] = true
			}
		}
		return len(ips) >= 3
	})
}
