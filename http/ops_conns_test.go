package http_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/store"
)

// The private metrics listener has a cap of its own: idle connections opened to it
// past the cap are closed, and a scrape still gets through once they are. Uncapped, a
// flood there took the descriptors the public listener and the store need.
func TestOpsListenerCapsItsConnections(t *testing.T) {
	st, err := store.Open(store.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := hangarhttp.New(hangarhttp.Config{AdminToken: "ops-admin-token-0123456789", Logger: slog.New(slog.DiscardHandler)},
		hangarhttp.Deps{Blog: st, Store: st, Balances: st, Users: st})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeOps(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		st.Close()
	})
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 40 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	var closed atomic.Int32
	var wg sync.WaitGroup
	for _, c := range idle {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err == io.EOF {
				closed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := closed.Load(); n < 40-32 {
		t.Fatalf("%d of 40 idle connections were closed, want at least %d past the cap", n, 40-32)
	}
	for _, c := range idle {
		c.Close()
	}
	idle = nil
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape got through once the idle connections were gone: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
