package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/client"
)

// These tests run the console exactly as `hangar console` builds it (the real admin
// API client and the real root model) against a real `hangar serve` subprocess; only
// the terminal is teatest's.

const consoleWait = 10 * time.Second

// console is a teatest program plus everything it has printed so far, without
// terminal escapes, so that waits can match text that was drawn in an earlier frame.
type console struct {
	tm   *teatest.TestModel
	mu   sync.Mutex
	out  []byte
	from int // wait matches output from here on (see since)
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]`)

func startConsole(t *testing.T, url string) *console {
	t.Helper()
	// Short backoffs so a lost daemon shows within the test's patience, as it would
	// within an operator's.
	c, err := client.New(url, hangartest.AdminToken, client.WithBackoff(50*time.Millisecond, 500*time.Millisecond),
		client.WithRequestTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m := tui.New(tui.Options{
		Daemon: c, Context: t.Context(), Target: c.BaseURL(),
		Refresh: 300 * time.Millisecond, Frame: 10 * time.Millisecond, Width: 120, Height: 40,
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	t.Cleanup(func() { _ = tm.Quit() })
	return &console{tm: tm}
}

// wait blocks until every pattern matches the output printed so far.
func (c *console) wait(t *testing.T, patterns ...string) {
	t.Helper()
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = regexp.MustCompile(p)
	}
	var screen string
	ok := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		screen = ansiRE.ReplaceAllString(string(c.out[c.from:]), "")
		for _, re := range res {
			if !re.MatchString(screen) {
				return false
			}
		}
		return true
	}
	if ok() {
		return
	}
	deadline := time.Now().Add(consoleWait)
	for {
		buf := make([]byte, 64<<10)
		n, _ := c.tm.Output().Read(buf)
		c.mu.Lock()
		c.out = append(c.out, buf[:n]...)
		c.mu.Unlock()
		if ok() {
			return
		}
		if time.Now().After(deadline) {
			tail := screen[max(0, len(screen)-3000):]
			t.Fatalf("console never showed %q; last output:\n%s", patterns, tail)
		}
		if n == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// since makes later waits look only at what is printed from now on, so that text
// drawn before (the same page position, say) cannot satisfy them.
func (c *console) since() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.from = len(c.out)
}

func (c *console) keys(keys ...string) {
	for _, k := range keys {
		c.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
	}
}

// finish quits the program and waits for it to end, so no goroutine of the console
// outlives the test.
func (c *console) finish(t *testing.T) {
	t.Helper()
	c.keys("q")
	c.tm.WaitFinished(t, teatest.WithFinalTimeout(consoleWait))
}

func (d *daemon) call(t *testing.T, method, path, token string, body any) hangartest.Response {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	return hangartest.Do(t, method, d.URL+path, b, "Authorization", "Bearer "+token)
}

func (d *daemon) placeOrder(t *testing.T, user int64, spec, region string) int64 {
	t.Helper()
	r := d.call(t, "POST", "/orders", hangartest.WebhookSecret, map[string]any{
		"user_id": user, "telegram_user_id": fmt.Sprint(user), "spec_id": spec, "region": region,
	})
	if r.Status != 201 {
		t.Fatalf("POST /orders %s: %d %s", spec, r.Status, r.Body)
	}
	var out struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &out)
	return out.OrderID
}

// TestConsoleFollowsOrderAndRequeuesDeadLetter: an order's success reaches the console
// through the live feed, a dead letter shows in its view, and the operator's requeue
// from the console reaches the daemon.
func TestConsoleFollowsOrderAndRequeuesDeadLetter(t *testing.T) {
	plans := writePlans(t)
	d := startDaemon(t, t.TempDir(), "HANGAR_SIM_LATENCY=300ms", "HANGAR_SIM_FAIL_RATE=0", "HANGAR_RETRY_BASE=200ms", "HANGAR_PLANS="+plans)
	con := startConsole(t, d.URL)
	con.wait(t, "queue depth", "waiting for orders")

	const user = 4242
	if r := d.call(t, "POST", fmt.Sprintf("/admin/users/%d/deposit", user), hangartest.AdminToken, map[string]any{"amount": 100000}); r.Status != 200 {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	ok := d.placeOrder(t, user, "sim-nano", "tokyo")
	con.wait(t, fmt.Sprintf(`#%d\s+started\s+provisioning`, ok), fmt.Sprintf(`#%d\s+succeeded\s+active`, ok))

	bad := d.placeOrder(t, user, "sim-broken", "tokyo")
	con.wait(t, fmt.Sprintf(`#%d\s+dead_lettered\s+failed`, bad))
	con.keys("3")
	con.wait(t, `1 dead letters`, fmt.Sprintf(`\b%d\s+%d\s+sim-broken\s+tokyo`, bad, user))
	con.keys("r")
	con.wait(t, fmt.Sprintf(`Requeue order #%d\? \(y/n\)`, bad))
	con.keys("y")
	con.wait(t, fmt.Sprintf(`✓ order #%d requeued`, bad))

	_, events := d.order(t, bad)
	if !strings.Contains(strings.Join(events, " "), "dead_lettered requeued") {
		t.Fatalf("order %d history %v: the console's requeue did not reach the daemon", bad, events)
	}
	con.finish(t)
}

// TestConsoleShowsUnreachableDaemon: the banner comes up when the daemon dies under an
// attached console, and straight away for a console started against a stopped one.
func TestConsoleShowsUnreachableDaemon(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	banner := `daemon unreachable at ` + regexp.QuoteMeta(d.URL) + `: .*connection refused.* — reconnecting`

	attached := startConsole(t, d.URL)
	attached.wait(t, "queue depth")
	d.kill()
	attached.wait(t, banner)
	attached.finish(t)

	fresh := startConsole(t, d.URL)
	fresh.wait(t, banner, "waiting for the daemon")
	fresh.finish(t)
}

// TestConsoleShowsDemoTraffic is `make run` followed by `hangar console`: with --demo
// on, and nothing else driving the daemon, the console shows orders completing, a
// user tripping the rate limiter and blog views, and no secret reaches the log.
func TestConsoleShowsDemoTraffic(t *testing.T) {
	d := startDaemon(t, t.TempDir(), "HANGAR_DEMO=true", "HANGAR_SIM_LATENCY=100ms", "HANGAR_SIM_FAIL_RATE=0",
		"HANGAR_RATE_LIMIT=5", "HANGAR_CLIENT_IP_HEADER=X-Real-IP")
	con := startConsole(t, d.URL)
	con.wait(t, `#\d+\s+succeeded\s+active`)
	con.keys("4")
	con.wait(t, `limit 5 per 60s · \d+ open windows · [1-9]\d* limited`)
	con.keys("5")
	con.wait(t, `today [1-9]\d* views · [1-9]\d* visitors`)
	con.finish(t)

	// Demo orders are real orders: the demo credited the user, then the order held
	// its price.
	var page struct {
		Orders []struct {
			OrderID int64 `json:"order_id"`
			UserID  int64 `json:"user_id"`
		} `json:"orders"`
	}
	d.call(t, "GET", "/admin/orders?limit=1", hangartest.AdminToken, nil).JSON(t, &page)
	if len(page.Orders) == 0 {
		t.Fatal("the demo placed no order")
	}
	first := page.Orders[0]
	var acct struct {
		Ledger []struct {
			Kind    string `json:"kind"`
			OrderID int64  `json:"order_id"`
		} `json:"ledger"`
	}
	d.call(t, "GET", fmt.Sprintf("/admin/users/%d", first.UserID), hangartest.AdminToken, nil).JSON(t, &acct)
	var deposited, held bool
	for _, e := range acct.Ledger {
		deposited = deposited || e.Kind == "deposit"
		held = held || (e.Kind == "hold" && e.OrderID == first.OrderID)
	}
	if !deposited || !held {
		t.Fatalf("user %d ledger %+v: want a demo deposit and a hold for order %d", first.UserID, acct.Ledger, first.OrderID)
	}
	logs := d.logs.String()
	for _, secret := range []string{hangartest.WebhookSecret, hangartest.AdminToken} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret is in the daemon's log")
		}
	}
	if !strings.Contains(logs, "demo traffic on") {
		t.Fatalf("demo did not report starting:\n%s", logs)
	}
}

// writePlans writes a catalogue with a plan the simulator provisions and one it
// refuses permanently ("invalid" is the provider plan id the simulator answers 400),
// so an order of it dead-letters on its first attempt without waiting out retries.
func writePlans(t *testing.T) string {
	t.Helper()
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(`{"currency": "KRW", "plans": [
		{"spec_id": "sim-nano", "name": "nano", "provider": "sim", "plan": "sim-1c-1g", "regions": ["tokyo"], "price": 5000},
		{"spec_id": "sim-broken", "name": "broken", "provider": "sim", "plan": "invalid", "regions": ["tokyo"], "price": 5000}
	]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return plans
}

func (d *daemon) deposit(t *testing.T, user, amount int64) {
	t.Helper()
	if r := d.call(t, "POST", fmt.Sprintf("/admin/users/%d/deposit", user), hangartest.AdminToken, map[string]any{"amount": amount}); r.Status != 200 {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
}

func (d *daemon) order(t *testing.T, id int64) (status string, events []string) {
	t.Helper()
	var o struct {
		Status  string `json:"status"`
		History []struct {
			Event string `json:"event"`
		} `json:"history"`
	}
	r := d.call(t, "GET", fmt.Sprintf("/admin/orders/%d", id), hangartest.AdminToken, nil)
	if r.Status != 200 {
		t.Fatalf("GET order %d: %d %s", id, r.Status, r.Body)
	}
	r.JSON(t, &o)
	for _, h := range o.History {
		events = append(events, h.Event)
	}
	return o.Status, events
}

// settle waits until the daemon's queue is empty and nothing is being provisioned.
func (d *daemon) settle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var q struct {
			Depth    int64 `json:"depth"`
			InFlight int64 `json:"in_flight"`
		}
		d.call(t, "GET", "/admin/queue", hangartest.AdminToken, nil).JSON(t, &q)
		if q.Depth == 0 && q.InFlight == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue did not settle: %+v", q)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConsoleTerminatesActiveOrder: the operator terminates an active order from the
// orders view; the daemon deletes the server and the row follows, and the console
// then refuses to offer the now terminated order again.
func TestConsoleTerminatesActiveOrder(t *testing.T) {
	d := startDaemon(t, t.TempDir(), "HANGAR_SIM_LATENCY=100ms", "HANGAR_SIM_FAIL_RATE=0", "HANGAR_PLANS="+writePlans(t))
	const user = 4343
	d.deposit(t, user, 100000)
	id := d.placeOrder(t, user, "sim-nano", "tokyo")
	con := startConsole(t, d.URL)
	con.wait(t, fmt.Sprintf(`#%d\s+succeeded\s+active`, id))
	con.keys("2")
	con.wait(t, fmt.Sprintf(`\b%d\s+active\s+%d\s+sim-nano`, id, user), `orders 1–1\b`)
	con.since()
	con.keys("T")
	con.wait(t, fmt.Sprintf(`Terminate order #%d and delete its server (\S+ )?at sim\? This cannot be undone\. \(y/n\)`, id))
	con.since()
	con.keys("y")
	con.wait(t, fmt.Sprintf(`✓ order #%d terminated, its server deleted`, id), fmt.Sprintf(`\b%d\s+terminated\s+%d\s+sim-nano`, id, user))

	status, events := d.order(t, id)
	if status != "terminated" || !slices.Contains(events, "terminated") {
		t.Fatalf("order %d is %s with history %v: the console's terminate did not reach the daemon", id, status, events)
	}

	con.since()
	con.keys("T")
	con.wait(t, fmt.Sprintf(`order #%d is terminated: only an active or suspended order has a server to terminate`, id))
	con.finish(t)
}

// TestConsolePagesOrders: more than a page of real orders, walked forward and back
// through the admin API's before cursor, with and without a status filter.
func TestConsolePagesOrders(t *testing.T) {
	d := startDaemon(t, t.TempDir(), "HANGAR_SIM_LATENCY=5ms", "HANGAR_SIM_FAIL_RATE=0", "HANGAR_MAX_CONCURRENCY=20",
		"HANGAR_ORDERS_PER_HOUR=1000", "HANGAR_PLANS="+writePlans(t))
	const user, good, broken = 4444, 215, 15
	d.deposit(t, user, (good+broken)*5000)
	var ids []int64
	for i := range good + broken {
		spec := "sim-nano"
		if i%15 == 7 {
			spec = "sim-broken"
		}
		ids = append(ids, d.placeOrder(t, user, spec, "tokyo"))
	}
	d.settle(t)
	newest, oldest := slices.Max(ids), slices.Min(ids)

	con := startConsole(t, d.URL)
	con.wait(t, "queue depth")
	con.keys("2")
	con.wait(t, `status all\s+sort newest\s+orders 1–200 · \] older\s+200 of 200 shown`, fmt.Sprintf(`\s%d\s+active\s+%d\s`, newest, user))
	con.since()
	con.keys("]")
	con.wait(t, `orders 201–230 · \[ newer · last page\s+30 of 30 shown`, fmt.Sprintf(`\s%d\s+active\s+%d\s`, oldest, user))
	con.since()
	con.keys("]")
	con.wait(t, `no older orders: this is the last page`)
	con.since()
	con.keys("[")
	con.wait(t, `orders 1–200 · \] older\s+200 of 200 shown`)

	con.since()
	con.keys("s", "s", "s") // pending, provisioning, active
	con.wait(t, `status active\s+sort newest\s+orders 1–200 · \] older\s+200 of 200 shown`)
	con.since()
	con.keys("]")
	con.wait(t, `status active\s+sort newest\s+orders 201–215 · \[ newer · last page\s+15 of 15 shown`)
	con.since()
	con.keys("[")
	con.wait(t, `status active\s+sort newest\s+orders 1–200 · \] older`)
	con.since()
	con.keys("s", "s") // suspended (none), then failed: the broken plan's dead letters, one page
	con.wait(t, `status failed\s+sort newest\s+orders 1–15\s+15 of 15 shown`)
	con.since()
	con.keys("]")
	con.wait(t, `no older orders: this is the last page`)
	con.finish(t)
}
