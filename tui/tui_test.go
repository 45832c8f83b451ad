package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/api"
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
		{"shift+tab wraps to outbox", []string{"shift+tab"}, "sending off"},
		{"2 orders", []string{"2"}, "sort newest"},
		{"3 dead letters", []string{"3"}, "3 dead letters"},
		{"4 rate limits", []string{"4"}, "limit 30 per 60s"},
		{"5 blog", []string{"5"}, "hello-hangar"},
		{"6 outbox", []string{"6"}, "order received"},
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
	b.keys("s", "s", "s", "s", "s", "s") // back to all
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
		{"requeue all yes", "3", "plan sold out", []string{"R"}, "Requeue all 3 dead letters?", "y", "RequeueAll"},
		{"requeue all esc", "3", "plan sold out", []string{"R"}, "Requeue all 3 dead letters?", "esc", "RequeueAll"},
		{"purge yes", "3", "plan sold out", []string{"P"}, "Purge all 3 dead letters?", "y", "PurgeDLQ"},
		{"purge no", "3", "plan sold out", []string{"P"}, "Purge all 3 dead letters?", "n", "PurgeDLQ"},
		{"reset window yes", "4", "LIMITED", []string{"down", "x"}, "Reset the message window of user 7002?", "y", "ResetRateLimit 7002"},
		{"reset window no", "4", "LIMITED", []string{"x"}, "Reset the message window of user 7001?", "n", "ResetRateLimit 7001"},
		{"cancel order yes", "2", "6 of 6 shown", []string{"c"}, "Cancel order #45 (pending)?", "y", "CancelOrder 45"},
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
