package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/internal/sshtest"
)

// acked is what the daemon answered 2xx to while under load: all of it must survive
// the shutdown.
type acked struct {
	mu      sync.Mutex
	orders  []int64
	updates map[int64][]byte
	views   int
}

// load sends orders, webhook updates and blog views from several clients at once
// until stop closes or the daemon stops answering, noting every 2xx.
func load(d *daemon, users int, stop <-chan struct{}, a *acked, wg *sync.WaitGroup) {
	client := &http.Client{Timeout: 10 * time.Second}
	do := func(method, path string, body []byte, headers ...string) (int, []byte, error) {
		req, _ := http.NewRequest(method, d.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, err = buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes(), err
	}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch i % 3 {
				case 0:
					user := int64(1 + (w*1000+i)%users)
					body := fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"sim-nano","region":"tokyo"}`, user, user)
					var code int
					var out []byte
					if code, out, err = do("POST", "/orders", []byte(body), "Authorization", "Bearer "+hangartest.WebhookSecret); code == 201 {
						var o struct {
							OrderID int64 `json:"order_id"`
						}
						if json.Unmarshal(out, &o) == nil {
							a.mu.Lock()
							a.orders = append(a.orders, o.OrderID)
							a.mu.Unlock()
						}
					}
				case 1:
					id := int64(w*1_000_000 + i + 1)
					update := hangartest.Update(id, int64(100+w), "/help")
					var code int
					if code, _, err = do("POST", "/webhook", update, "X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret); code == 200 {
						a.mu.Lock()
						a.updates[id] = update
						a.mu.Unlock()
					}
				case 2:
					ip := fmt.Sprintf("10.%d.%d.%d", w, (i/250)%250, i%250+1)
					var code int
					if code, _, err = do("POST", "/api/views/hello", nil, "X-Client-IP", ip); code == 200 {
						a.mu.Lock()
						a.views++
						a.mu.Unlock()
					}
				}
				if err != nil {
					return // the daemon has closed its listener
				}
			}
		}()
	}
}

// shutdownLines are the daemon's words from the signal on, without the chatter.
func shutdownLines(logs string) string {
	var out []string
	on := false
	for _, line := range strings.Split(logs, "\n") {
		on = on || strings.Contains(line, "engine stopping")
		if on && !strings.Contains(line, "level=DEBUG") && !strings.Contains(line, "sending is off") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

var logTimeRE = regexp.MustCompile(`time=(\S+) level=\w+ msg="engine stopping`)

// The shutdown case: under orders, updates and views, with a console's event
// stream and an SSH console session attached, SIGTERM ends the daemon in seconds
// (it took 20-22 s), every answered request is still there after a restart, and no
// order attempt starts once stopping began.
func TestSIGTERMUnderLoadExitsInSecondsLosingNothing(t *testing.T) {
	dataDir := t.TempDir()
	operator := sshtest.NewSigner(t)
	if err := os.WriteFile(filepath.Join(dataDir, "authorized_keys"), gossh.MarshalAuthorizedKey(operator.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	sshAddr := freeAddr(t)
	// The race detector sleeps a second at exit by default (atexit_sleep_ms): that is
	// the test binary's cost, not hangar's, so it is switched off.
	env := []string{"HANGAR_SIM_LATENCY=50ms-400ms", "HANGAR_SIM_FAIL_RATE=0", "HANGAR_ORDERS_PER_HOUR=100000",
		"HANGAR_CLIENT_IP_HEADER=X-Client-IP", "GORACE=atexit_sleep_ms=0"}
	d := startDaemon(t, dataDir, append(env, "HANGAR_SSH_ADDR="+sshAddr)...)
	const users = 20
	for u := int64(1); u <= users; u++ {
		d.deposit(t, u, 100_000_000)
	}

	// A console's event stream, held open as `hangar console` holds it.
	req, _ := http.NewRequest("GET", d.URL+"/admin/events", nil)
	req.Header.Set("Authorization", "Bearer "+hangartest.AdminToken)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if stream.StatusCode != 200 {
		t.Fatalf("event stream: %d", stream.StatusCode)
	}
	streamEnded := make(chan struct{})
	go func() {
		defer close(streamEnded)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
		}
		stream.Body.Close()
	}()
	// An operator's SSH console session.
	sshClient, err := sshtest.Dial(sshAddr, operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sshClient.Close()
	sess, scr, _ := sshtest.Console(t, sshClient)
	scr.WaitFor(t, "queue depth")
	sessionEnded := make(chan struct{})
	go func() { _ = sess.Wait(); close(sessionEnded) }()

	a := &acked{updates: map[int64][]byte{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	load(d, users, stop, a, &wg)
	hangartest.WaitFor(t, 60*time.Second, "load to be under way", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return len(a.orders) >= 60 && len(a.updates) >= 30 && a.views >= 30
	})

	exited := make(chan error, 1)
	signalled := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() { exited <- d.cmd.Wait() }()
	select {
	case err := <-exited:
		took := time.Since(signalled)
		t.Logf("exited %v after SIGTERM under load; the daemon said:\n%s", took.Round(time.Millisecond), shutdownLines(d.logs.String()))
		if err != nil {
			t.Fatalf("hangar serve exited with %v\n%s", err, d.logs.String())
		}
		if took > 5*time.Second {
			t.Fatalf("shutdown took %v, want within 5 s\n%s", took, d.logs.String())
		}
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		t.Fatalf("hangar serve still running 30 s after SIGTERM\n%s", d.logs.String())
	}
	close(stop)
	wg.Wait()
	for what, ch := range map[string]chan struct{}{"event stream": streamEnded, "SSH session": sessionEnded} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Errorf("the %s was not closed by the shutdown", what)
		}
	}
	logs := d.logs.String()
	m := logTimeRE.FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no stopping line in the log\n%s", logs)
	}
	stopping, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		t.Fatal(err)
	}

	restarted := time.Now() // starts after this are the next run's
	d2 := startDaemon(t, dataDir, env...)
	a.mu.Lock()
	defer a.mu.Unlock()
	t.Logf("acknowledged before the signal: %d orders, %d updates, %d views", len(a.orders), len(a.updates), a.views)
	for _, id := range a.orders {
		r := d2.call(t, "GET", fmt.Sprintf("/admin/orders/%d", id), hangartest.AdminToken, nil)
		if r.Status != 200 {
			t.Fatalf("order %d was acknowledged (201) but is gone after the restart: %d %s", id, r.Status, r.Body)
		}
		var o struct {
			History []struct {
				At    time.Time `json:"at"`
				Event string    `json:"event"`
			} `json:"history"`
		}
		r.JSON(t, &o)
		for _, h := range o.History {
			// The log's clock has millisecond precision.
			if h.Event == "started" && h.At.After(stopping.Add(time.Millisecond)) && h.At.Before(restarted) {
				t.Errorf("order %d started at %v, after stopping began at %v", id, h.At, stopping)
			}
		}
	}
	for id, update := range a.updates {
		r := hangartest.Do(t, "POST", d2.URL+"/webhook", update, "X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"duplicate":true`) {
			t.Fatalf("update %d was acknowledged but is not known after the restart: %d %s", id, r.Status, r.Body)
		}
	}
	var v struct {
		Views int `json:"views"`
	}
	hangartest.Do(t, "GET", d2.URL+"/api/views/hello", nil).JSON(t, &v)
	if v.Views < a.views {
		t.Fatalf("views after the restart = %d, but %d were acknowledged", v.Views, a.views)
	}
}
