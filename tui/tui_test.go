package tui_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

func TestMain(m *testing.M) {
	// Colour-free output keeps the golden files readable and stable across terminals.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

const waitFor = 5 * time.Second

type bundle struct {
	tm *teatest.TestModel
	d  *fakedaemon.Daemon
}

func setup(t *testing.T, prepare ...func(*fakedaemon.Daemon)) bundle {
	t.Helper()
	d := fakedaemon.New()
	for _, p := range prepare {
		p(d)
	}
	m := tui.New(tui.Options{
		Daemon:  d,
		Context: t.Context(),
		Target:  "http://127.0.0.1:8080",
		Now:     func() time.Time { return fakedaemon.Now },
		Refresh: 5 * time.Second,
		Frame:   10 * time.Millisecond,
		Width:   100,
		Height:  30,
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() { _ = tm.Quit() })
	return bundle{tm: tm, d: d}
}

// waitScreen waits until the output stream shows every one of want.
func (b bundle) waitScreen(t *testing.T, want ...string) {
	t.Helper()
	var seen []byte
	teatest.WaitFor(t, b.tm.Output(), func(out []byte) bool {
		seen = append(seen, out...)
		for _, w := range want {
			if !bytes.Contains(seen, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(waitFor), teatest.WithCheckInterval(5*time.Millisecond))
}

func (b bundle) keys(keys ...string) {
	for _, k := range keys {
		switch k {
		case "tab":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyTab})
		case "shift+tab":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyShiftTab})
		case "enter":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		case "esc":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
		case "down":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyDown})
		case "up":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyUp})
		case "ctrl+s":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
		case "ctrl+d":
			b.tm.Send(tea.KeyMsg{Type: tea.KeyCtrlD})
		default:
			b.tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		}
	}
}

// finish quits and returns the last frame the operator saw.
func (b bundle) finish(t *testing.T) string {
	t.Helper()
	b.keys("q")
	fm := b.tm.FinalModel(t, teatest.WithFinalTimeout(waitFor))
	return fm.View()
}

func snapshot(at int, depth, dead int64, alarm bool) api.Event {
	s := api.QueueStats{
		At: fakedaemon.Now.Add(time.Duration(at) * time.Second), Depth: depth, Pending: depth, InFlight: int64(at % 6), MaxConcurrency: 5,
		Enqueued: int64(150 + at*3), Started: int64(140 + at*3), Retried: int64(30 + at*at%7), Succeeded: int64(100 + at*2),
		DeadLettered: dead, DeadLetters: dead, LagSeconds: float64(at),
		Alarms:     api.Alarms{Depth: alarm},
		Thresholds: api.Thresholds{Depth: 500, DeadLetters: 10, LagSeconds: 600},
	}
	return api.Event{Type: api.EventSnapshot, Snapshot: &s}
}

func TestOverviewGolden(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	for i := 1; i <= 20; i++ {
		b.d.Send(snapshot(i, int64(i*30), int64(i/4), i*30 > 500))
	}
	b.d.Send(api.Event{Type: api.EventOrder, Order: &api.OrderEvent{At: fakedaemon.Now, Event: "succeeded", OrderID: 43, Status: "active", Attempt: 1}})
	b.d.Send(api.Event{Type: api.EventOrder, Order: &api.OrderEvent{At: fakedaemon.Now, Event: "dead_lettered", OrderID: 42, Status: "failed", Attempt: 4, Error: "vultr: plan sold out"}})
	b.waitScreen(t, "600", "ALARM", "vultr: plan sold out")
	b.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30}) // render now, not on the next tick
	teatest.RequireEqualOutput(t, []byte(b.finish(t)))
}

func TestSwitchViews(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"tab to orders", []string{"tab"}, "status all"},
		{"shift+tab wraps to the audit log", []string{"shift+tab"}, "refused: viewer"},
		{"2 orders", []string{"2"}, "sort newest"},
		{"3 dead letters", []string{"3"}, "3 dead letters"},
		{"4 rate limits", []string{"4"}, "limit 30 per 60s"},
		{"5 blog", []string{"5"}, "hello-hangar"},
		{"6 outbox", []string{"6"}, "order received"},
		{"7 user", []string{"7"}, "no user shown"},
		{"8 comments", []string{"8"}, "cheap pills"},
		{"9 logs", []string{"9"}, "order dead-lettered"},
		{"0 reconciler", []string{"0"}, "60123457"},
		{"number keys after tab", []string{"tab", "tab", "4"}, "limit 30 per 60s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			b.waitScreen(t, "queue depth")
			b.keys(tt.keys...)
			b.waitScreen(t, tt.want)
			if got := b.finish(t); !strings.Contains(got, tt.want) {
				t.Fatalf("final screen lacks %q:\n%s", tt.want, got)
			}
		})
	}
}

func TestOrdersFilterSortDetail(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "6 of 6 shown")
	b.keys("s") // status: pending
	b.waitScreen(t, "1 of 1 shown")
	if !b.d.WaitCall("Orders pending", waitFor) {
		t.Fatalf("status filter did not reach the daemon: %v", b.d.Calls())
	}
	b.keys("s", "s", "s", "s", "s", "s", "s") // back to all
	b.waitScreen(t, "status all")
	b.keys("o") // oldest first
	b.waitScreen(t, "sort oldest")
	b.keys("/", "sold", "enter")
	b.waitScreen(t, "1 of 6 shown")
	b.keys("enter")
	b.waitScreen(t, "order #42", "dead_lettered")
	if !b.d.WaitCall("Order 42", waitFor) {
		t.Fatalf("detail did not load the order: %v", b.d.Calls())
	}
	teatest.RequireEqualOutput(t, []byte(b.finish(t)))
}

func TestOrdersLiveEventUpdatesRow(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "6 of 6 shown")
	b.d.Send(api.Event{Type: api.EventOrder, Order: &api.OrderEvent{At: fakedaemon.Now, Event: "retry_scheduled", OrderID: 45, Status: "provisioning", Attempt: 3, Error: "linode: quota exceeded"}})
	b.waitScreen(t, "linode: quota exceeded")
	b.finish(t)
}

func TestConfirmations(t *testing.T) {
	tests := []struct {
		name   string
		view   string
		ready  string
		keys   []string
		prompt string
		answer string
		call   string
	}{
		{"requeue one yes", "3", "plan sold out", []string{"down", "r"}, "Requeue order #39?", "y", "Requeue 39"},
		{"requeue one no", "3", "plan sold out", []string{"down", "r"}, "Requeue order #39?", "n", "Requeue 39"},
		{"requeue from detail", "3", "plan sold out", []string{"enter", "r"}, "Requeue order #42?", "y", "Requeue 42"},
		{"requeue all yes", "3", "plan sold out", []string{"R"}, "Requeue all 3 dead letters (#42, #39, #38)?", "y", "Requeue 38"},
		{"requeue all esc", "3", "plan sold out", []string{"R"}, "Requeue all 3 dead letters (#42, #39, #38)?", "esc", "Requeue 42"},
		{"purge yes", "3", "plan sold out", []string{"P"}, "Purge all 3 dead letters (#42, #39, #38)?", "y", "PurgeDLQ"},
		{"purge no", "3", "plan sold out", []string{"P"}, "Purge all 3 dead letters (#42, #39, #38)?", "n", "PurgeDLQ"},
		{"reset window yes", "4", "LIMITED", []string{"down", "x"}, "Reset the message window of user 7002?", "y", "ResetRateLimit 7002"},
		{"reset window no", "4", "LIMITED", []string{"x"}, "Reset the message window of user 7001?", "n", "ResetRateLimit 7001"},
		{"cancel order yes", "2", "6 of 6 shown", []string{"c"}, "Cancel order #45 (pending)?", "y", "CancelOrder 45"},
		{"terminate yes", "2", "6 of 6 shown", []string{"down", "down", "T"}, "Terminate order #43 and delete its server 203.0.113.7 at sim? This cannot be undone.", "y", "TerminateOrder 43"},
		{"terminate no", "2", "6 of 6 shown", []string{"down", "down", "T"}, "Terminate order #43 and delete its server 203.0.113.7 at sim?", "n", "TerminateOrder 43"},
		{"terminate esc", "2", "6 of 6 shown", []string{"down", "down", "down", "down", "T"}, "Terminate order #41 and delete its server", "esc", "TerminateOrder 41"},
		{"terminate from detail", "2", "6 of 6 shown", []string{"down", "down", "enter", "T"}, "Terminate order #43 and delete", "y", "TerminateOrder 43"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			b.waitScreen(t, "queue depth")
			b.keys(tt.view)
			b.waitScreen(t, tt.ready)
			b.keys(tt.keys...)
			b.waitScreen(t, tt.prompt, "(y/n)")
			b.keys("q") // ignored while a question is open: it must not quit or confirm
			b.keys(tt.answer)
			if tt.answer == "y" {
				if !b.d.WaitCall(tt.call, waitFor) {
					t.Fatalf("%s not called after y: %v", tt.call, b.d.Calls())
				}
				b.waitScreen(t, "✓")
			} else {
				b.waitScreen(t, "cancelled")
			}
			b.finish(t)
			if got := b.d.Called(tt.call); got != (tt.answer == "y") {
				t.Fatalf("called %s = %v after %q; calls %v", tt.call, got, tt.answer, b.d.Calls())
			}
		})
	}
}

func TestViewGoldens(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want []string
	}{
		{"dead_letters", []string{"3"}, []string{"3 dead letters", "plan sold out"}},
		{"rate_limits", []string{"4"}, []string{"LIMITED", "near"}},
		{"blog", []string{"5"}, []string{"312 views", "wish-ssh-tui"}},
		{"outbox", []string{"6"}, []string{"203.0.113.9", "order received"}},
		{"help", []string{"3", "?"}, []string{"requeue all", "previous view"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			b.waitScreen(t, "queue depth")
			b.keys(tt.keys...)
			b.waitScreen(t, tt.want...)
			out := b.finish(t)
			if strings.Contains(out, "hunter2") {
				t.Fatal("outbox shows a password")
			}
			teatest.RequireEqualOutput(t, []byte(out))
		})
	}
}

func TestUnreachableBanner(t *testing.T) {
	b := setup(t, func(d *fakedaemon.Daemon) { d.SetDown(true) })
	b.waitScreen(t, "daemon unreachable at http://127.0.0.1:8080", "connection refused", "reconnecting in 5s")
	b.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 12})
	b.waitScreen(t, "reconnecting") // the resize re-renders
	b.d.SetDown(false)
	b.keys("g")
	b.waitScreen(t, "queue depth")
	if out := b.finish(t); strings.Contains(out, "unreachable") {
		t.Fatalf("banner stayed after the daemon came back:\n%s", out)
	}
}

func TestUnreachableBannerGolden(t *testing.T) {
	b := setup(t, func(d *fakedaemon.Daemon) { d.SetDown(true) })
	b.waitScreen(t, "reconnecting in 5s")
	b.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 12})
	b.waitScreen(t, "reconnecting")
	teatest.RequireEqualOutput(t, []byte(b.finish(t)))
}

func TestFeedLossBanner(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.d.Send(api.Event{Type: api.EventConn, Conn: &api.ConnState{Err: "unexpected EOF", RetryAt: fakedaemon.Now.Add(3 * time.Second)}})
	b.waitScreen(t, "unexpected EOF — reconnecting in 3s")
	b.d.Send(api.Event{Type: api.EventConn, Conn: &api.ConnState{Connected: true}}, snapshot(1, 77, 0, false))
	b.waitScreen(t, "77")
	if out := b.finish(t); strings.Contains(out, "reconnecting") {
		t.Fatalf("banner stayed after reconnect:\n%s", out)
	}
}

// TestEventFlood pushes far more than 100 events per second; the console must take
// them in batches and show the newest state promptly.
func TestEventFlood(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	start := time.Now()
	for i := range 3000 {
		if i%10 == 0 {
			b.d.Send(snapshot(i/10+1, int64(i%400), 1, false))
			continue
		}
		b.d.Send(api.Event{Type: api.EventOrder, Order: &api.OrderEvent{At: fakedaemon.Now, Event: "started", OrderID: int64(i), Status: "provisioning", Attempt: 1}})
	}
	b.d.Send(snapshot(10000, 4321, 1, false))
	b.waitScreen(t, "4321")
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("3000 events took %s to show", d)
	}
	b.finish(t)
}

func TestResize(t *testing.T) {
	for _, size := range [][2]int{{120, 40}, {80, 24}, {50, 16}} {
		for _, view := range []string{"1", "2", "3", "4", "5", "6"} {
			t.Run(fmt.Sprintf("%dx%d view %s", size[0], size[1], view), func(t *testing.T) {
				b := setup(t)
				b.waitScreen(t, "queue depth")
				b.keys(view)
				b.tm.Send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				b.keys("?") // forces a render after the resize has been applied
				b.waitScreen(t, "next view")
				out := b.finish(t)
				lines := strings.Split(out, "\n")
				if len(lines) > size[1] {
					t.Errorf("%d lines for a %d-line terminal", len(lines), size[1])
				}
				for _, l := range lines {
					if w := lipgloss.Width(l); w > size[0] {
						t.Errorf("line of width %d > %d: %q", w, size[0], l)
					}
				}
			})
		}
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune("q")}, {Type: tea.KeyCtrlC}} {
		t.Run(k.String(), func(t *testing.T) {
			b := setup(t)
			b.waitScreen(t, "queue depth")
			b.tm.Send(k)
			b.tm.WaitFinished(t, teatest.WithFinalTimeout(waitFor))
		})
	}
}

// row matches an orders table row of the final frame by its id and status.
func row(id int64, status string) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d\s+%s\s`, id, regexp.QuoteMeta(status)))
}

func calledPrefix(d *fakedaemon.Daemon, prefix string) []string {
	var out []string
	for _, c := range d.Calls() {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// TestTerminateConfirmed follows one termination: the question, the status line and
// the row while the daemon works, then the outcome and the row as the daemon answered.
func TestTerminateConfirmed(t *testing.T) {
	b := setup(t)
	release := b.d.Hold("TerminateOrder")
	defer release()
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "6 of 6 shown")
	b.keys("down", "down", "T")
	b.waitScreen(t, "Terminate order #43 and delete its server 203.0.113.7 at sim? This cannot be undone. (y/n)")
	b.keys("y")
	if !b.d.WaitCall("TerminateOrder 43", waitFor) {
		t.Fatalf("TerminateOrder 43 not called after y: %v", b.d.Calls())
	}
	b.waitScreen(t, "terminating order #43…", "terminating…")
	b.keys("T") // the same order again while the first request is out
	b.waitScreen(t, "order #43 is already being terminated")
	release()
	b.waitScreen(t, "✓ order #43 terminated, its server deleted")
	out := b.finish(t)
	if !row(43, "terminated").MatchString(out) {
		t.Fatalf("row of #43 does not say terminated:\n%s", out)
	}
	if !row(41, "active").MatchString(out) {
		t.Fatalf("another active order changed:\n%s", out)
	}
	if got := calledPrefix(b.d, "TerminateOrder"); len(got) != 1 {
		t.Fatalf("terminate calls = %v, want one", got)
	}
}

// TestTerminateRefusedForInactive: only an active or suspended order has a server; for any other
// the console says why and asks the daemon nothing.
func TestTerminateRefusedForInactive(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{"pending", []string{"T"}, "order #45 is pending: only an active or suspended order has a server to terminate"},
		{"provisioning", []string{"down", "T"}, "order #44 is provisioning: only an active or suspended order"},
		{"failed in detail", []string{"down", "down", "down", "enter", "T"}, "order #42 is failed: only an active or suspended order"},
		{"cancelled", []string{"down", "down", "down", "down", "down", "T"}, "order #40 is cancelled: only an active or suspended order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			b.waitScreen(t, "queue depth")
			b.keys("2")
			b.waitScreen(t, "6 of 6 shown")
			b.keys(tt.keys...)
			b.waitScreen(t, tt.want)
			b.keys("y") // nothing is waiting for an answer
			out := b.finish(t)
			if strings.Contains(out, "(y/n)") || strings.Contains(out, "Terminate order") {
				t.Fatalf("a non-active order was offered for termination:\n%s", out)
			}
			if got := calledPrefix(b.d, "TerminateOrder"); len(got) != 0 {
				t.Fatalf("the daemon was asked: %v", got)
			}
		})
	}
}

// TestTerminateError: a refusal or a failure of the daemon, and a request that did
// not get an answer, each show on the status line with the order named; the row
// stays as it was.
func TestTerminateError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"refused", &api.Error{Status: 409, Code: "conflict", Message: "the order is not in a state that allows this: order 43 is terminated"},
			"✗ terminate order #43: the order is not in a state that allows this: order 43 is terminated (409)"},
		{"provider failed", &api.Error{Status: 500, Code: "internal", Message: "internal error"},
			"✗ terminate order #43: internal error (500)"},
		{"no answer", errors.New("POST /admin/orders/43/terminate: context deadline exceeded"),
			"✗ terminate order #43: context deadline exceeded (may still be under way; g re-reads)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, func(d *fakedaemon.Daemon) { d.Fail("TerminateOrder", tt.err) })
			b.waitScreen(t, "queue depth")
			b.keys("2")
			b.waitScreen(t, "6 of 6 shown")
			b.keys("down", "down", "T")
			b.waitScreen(t, "Terminate order #43", "(y/n)")
			b.keys("y")
			b.waitScreen(t, tt.want)
			out := b.finish(t)
			if !strings.Contains(out, tt.want) {
				t.Fatalf("final screen lacks %q:\n%s", tt.want, out)
			}
			if !row(43, "active").MatchString(out) {
				t.Fatalf("row of #43 changed after a failed terminate:\n%s", out)
			}
			if strings.Contains(out, "unreachable") {
				t.Fatalf("one failed action raised the daemon banner:\n%s", out)
			}
		})
	}
}

// manyOrders replaces the seed's orders with n orders, ids n down to 1: odd ids
// pending, even ids active.
func manyOrders(n int64) func(*fakedaemon.Daemon) {
	return func(d *fakedaemon.Daemon) {
		d.AllOrders = nil
		for id := n; id >= 1; id-- {
			status := "active"
			if id%2 == 1 {
				status = "pending"
			}
			d.AllOrders = append(d.AllOrders, fakedaemon.NewOrder(id, id%9+1, status, 1, ""))
		}
	}
}

func countCalls(d *fakedaemon.Daemon, call string) int {
	n := 0
	for _, c := range d.Calls() {
		if c == call {
			n++
		}
	}
	return n
}

// TestOrdersPaging walks 450 orders a page at a time and back, by the daemon's before
// cursor.
func TestOrdersPaging(t *testing.T) {
	b := setup(t, manyOrders(450))
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "orders 1–200 · ] older", "200 of 200 shown")
	b.keys("]")
	b.waitScreen(t, "orders 201–400 · [ newer · ] older", "200 of 200 shown")
	if !b.d.Called("Orders before 251") {
		t.Fatalf("page 2 was not asked for below #251: %v", b.d.Calls())
	}
	b.keys("]")
	b.waitScreen(t, "orders 401–450 · [ newer · last page", "50 of 50 shown")
	if !b.d.Called("Orders before 51") {
		t.Fatalf("page 3 was not asked for below #51: %v", b.d.Calls())
	}
	b.keys("]")
	b.waitScreen(t, "no older orders: this is the last page")
	last := b.finish(t)
	if !row(50, "active").MatchString(last) || !row(49, "pending").MatchString(last) || row(51, "pending").MatchString(last) {
		t.Fatalf("page 3 does not start at #50:\n%s", last)
	}
	if got := calledPrefix(b.d, "Orders before"); slices.ContainsFunc(got, func(c string) bool { return c != "Orders before 251" && c != "Orders before 51" }) {
		t.Fatalf("asked past the last page: %v", got)
	}

	// Back again: the stack of cursors gives the pages as they were cut.
	b = setup(t, manyOrders(450))
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "orders 1–200 · ] older")
	b.keys("]")
	b.waitScreen(t, "orders 201–400")
	b.keys("]")
	b.waitScreen(t, "orders 401–450")
	before := countCalls(b.d, "Orders before 251")
	b.keys("[")
	b.waitScreen(t, "orders 201–400 · [ newer · ] older")
	if countCalls(b.d, "Orders before 251") <= before {
		t.Fatalf("going back did not re-read the page below #251: %v", b.d.Calls())
	}
	b.keys("[")
	b.waitScreen(t, "orders 1–200 · ] older")
	b.keys("[")
	b.waitScreen(t, "no newer orders: this is the first page")
	first := b.finish(t)
	if !row(450, "active").MatchString(first) || !strings.Contains(first, "orders 1–200") {
		t.Fatalf("not back on the newest page:\n%s", first)
	}
}

// TestOrdersPagingKeepsStatusFilter: pages of a filtered list hold only that status,
// and changing the filter starts again from the newest page.
func TestOrdersPagingKeepsStatusFilter(t *testing.T) {
	b := setup(t, manyOrders(450))
	b.waitScreen(t, "queue depth")
	b.keys("2")
	b.waitScreen(t, "orders 1–200 · ] older")
	b.keys("s")
	b.waitScreen(t, "status pending", "orders 1–200 · ] older")
	b.keys("]")
	b.waitScreen(t, "status pending", "orders 201–225 · [ newer · last page", "25 of 25 shown")
	if !b.d.Called("Orders pending before 51") {
		t.Fatalf("the second pending page was not asked for with the filter: %v", b.d.Calls())
	}
	b.keys("/", "#4", "enter") // a text filter is kept too, and narrows within the page
	b.waitScreen(t, "5 of 25 shown")
	b.keys("esc")
	b.waitScreen(t, "25 of 25 shown")
	b.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 40}) // room for all 25 rows
	b.keys("?")
	b.waitScreen(t, "older page", "newer page", "terminate server")
	b.keys("?")
	b.waitScreen(t, "T terminate server")
	out := b.finish(t)
	if !row(49, "pending").MatchString(out) || !row(1, "pending").MatchString(out) {
		t.Fatalf("page 2 of pending lacks #49 or #1:\n%s", out)
	}
	if regexp.MustCompile(`(?m)^\s*\d+\s+active\s`).MatchString(out) {
		t.Fatalf("an active order on a pending page:\n%s", out)
	}

	b = setup(t, manyOrders(450))
	b.waitScreen(t, "queue depth")
	b.keys("2", "s")
	b.waitScreen(t, "status pending", "orders 1–200 · ] older")
	b.keys("]")
	b.waitScreen(t, "orders 201–225")
	b.keys("s") // provisioning: none, from the newest page
	b.waitScreen(t, "status provisioning", "page 1 empty", "no orders match")
	if !b.d.WaitCall("Orders provisioning", waitFor) || len(calledPrefix(b.d, "Orders provisioning before")) != 0 {
		t.Fatalf("a new filter kept the old page's cursor: %v", b.d.Calls())
	}
	b.finish(t)
}
