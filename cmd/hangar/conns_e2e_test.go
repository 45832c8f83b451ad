package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// metric reads one sample of GET path (the public or private listener), summing the
// series whose line starts with name (labels included), 0 when absent.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) == 2 && strings.HasPrefix(string(f[0]), name) {
			var v float64
			fmt.Sscan(string(f[1]), &v)
			sum += v
		}
	}
	return sum
}

// openFiles counts the descriptors the daemon holds.
func (d *daemon) openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.cmd.Process.Pid))
	if err != nil {
		t.Skipf("cannot count the daemon's descriptors: %v", err)
	}
	return len(fds)
}

// alive fails the test if the daemon process has exited (it is a zombie until the
// test's cleanup waits for it, so signal 0 cannot tell).
func (d *daemon) alive(t *testing.T) {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
	if _, rest, ok := bytes.Cut(stat, []byte(") ")); err != nil || !ok || bytes.HasPrefix(rest, []byte("Z")) {
		t.Fatalf("hangar exited\n%s", d.logs.String())
	}
}

// waitHealthy polls the public /health until it answers 200.
func (d *daemon) waitHealthy(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(d.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health did not answer 200 within %v: %v\n%s", within, err, d.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// flood opens n idle TCP connections to addr (the kernel completes them whether the
// daemon accepts or not) and returns them.
func flood(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			break // the backlog is full: the flood has done its worst
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// The end-to-end case: with few descriptors, a flood of idle HTTP and SSH
// connections used to make accept4's EMFILE fatal. Now the daemon backs off, stays up,
// and answers /health once the flood closes.
func TestIdleConnectionFloodWithALowFileLimitIsSurvived(t *testing.T) {
	sshAddr := freeAddr(t)
	d := startDaemon(t, t.TempDir(), "HANGAR_SSH_ADDR="+sshAddr, "HANGAR_SSH_HANDSHAKE_TIMEOUT=30s")
	// A low `ulimit -n`, applied to the running daemon so that its own caps (derived
	// at start from the higher limit) do not shield it: accept itself runs out.
	limit := uint64(d.openFiles(t) + 64)
	if err := unix.Prlimit(d.cmd.Process.Pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Skipf("cannot lower the daemon's open-file limit: %v", err)
	}
	httpConns := flood(t, strings.TrimPrefix(d.URL, "http://"), 300)
	sshConns := flood(t, sshAddr, 100)
	t.Logf("flooded with %d HTTP and %d SSH connections at a limit of %d descriptors", len(httpConns), len(sshConns), limit)

	// The daemon has run out: wait until it says so, then check it is still there.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.logs.String(), "accept failed; backing off") {
		d.alive(t)
		if time.Now().After(deadline) {
			t.Fatalf("the flood never exhausted the daemon's descriptors\n%s", d.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.alive(t)
	for _, c := range append(httpConns, sshConns...) {
		c.Close()
	}
	d.waitHealthy(t, 60*time.Second)
	d.alive(t)
	if n := metric(t, d.URL+"/metrics", `hangar_accept_errors_total{listener="http"}`); n < 1 {
		t.Errorf("accept errors counted: %v, want at least 1", n)
	}
}

// Connections beyond --max-conns get a 503 JSON answer and are closed; the rest are
// served, and once they close the daemon serves again.
func TestConnectionsOverTheCapAreAnswered503(t *testing.T) {
	const maxConns = 8
	d := startDaemon(t, t.TempDir(), fmt.Sprintf("HANGAR_MAX_CONNS=%d", maxConns))
	http.DefaultClient.CloseIdleConnections()
	conns := flood(t, strings.TrimPrefix(d.URL, "http://"), maxConns+3)
	if len(conns) != maxConns+3 {
		t.Fatalf("opened %d connections, want %d", len(conns), maxConns+3)
	}
	// Which three are over the cap depends on when the server saw the health check's
	// connection close, so every connection is read: the idle ones under the cap time
	// out, the ones over it are answered at once.
	// Read all at once: an idle connection under the cap holds its reader to the deadline.
	var refused atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != "application/json" ||
				!bytes.Contains(body, []byte(`"code":"too_many_connections"`)) {
				t.Errorf("over the cap: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
				return
			}
			refused.Add(1)
		})
	}
	wg.Wait()
	if n := refused.Load(); n < 3 {
		t.Fatalf("%d of %d connections were answered 503 at a cap of %d, want at least 3", n, len(conns), maxConns)
	}
	for _, c := range conns {
		c.Close()
	}
	d.waitHealthy(t, 30*time.Second)
	if n := metric(t, d.URL+"/metrics", `hangar_connections_refused_total{listener="http"}`); n < 3 {
		t.Errorf("refused connections counted: %v, want at least 3", n)
	}
}

// Unauthenticated SSH connections are closed by hangar serve within the handshake
// timeout (the issue found 500 still open after 70 s).
func TestServeClosesUnauthenticatedSSHConnections(t *testing.T) {
	sshAddr := freeAddr(t)
	startDaemon(t, t.TempDir(), "HANGAR_SSH_ADDR="+sshAddr, "HANGAR_SSH_HANDSHAKE_TIMEOUT=500ms")
	conns := flood(t, sshAddr, 20)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := io.Copy(io.Discard, c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("SSH connection %d still open 30 s after a 500 ms handshake timeout", i)
		}
	}
}

// With --metrics-addr, /metrics and the detailed health live on the private listener
// only; the public one keeps a health that says ok and nothing more.
func TestPrivateListenerForMetricsAndDetailedHealth(t *testing.T) {
	ops := freeAddr(t)
	d := startDaemon(t, t.TempDir(), "HANGAR_METRICS_ADDR="+ops)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(d.URL + "/metrics"); code != 404 {
		t.Errorf("public /metrics = %d %.80s, want 404 (moved to --metrics-addr)", code, body)
	}
	if code, body := get(d.URL + "/health"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("public /health = %d %s", code, body)
	}
	if code, body := get("http://" + ops + "/metrics"); code != 200 || !strings.Contains(body, "hangar_http_requests_total") {
		t.Errorf("private /metrics = %d %.80s", code, body)
	}
	if code, body := get("http://" + ops + "/health"); code != 200 || !strings.Contains(body, `"store":"ok"`) || !strings.Contains(body, `"running":true`) {
		t.Errorf("private /health = %d %s, want the detailed health", code, body)
	}
}
