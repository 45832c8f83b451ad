package tui_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

// setupPolling is setup with a refresh clock fast enough that the list changes on
// screen while a question is open, as a busy daemon's lists do.
func setupPolling(t *testing.T, prepare ...func(*fakedaemon.Daemon)) bundle {
	t.Helper()
	d := fakedaemon.New()
	for _, p := range prepare {
		p(d)
	}
	m := tui.New(tui.Options{
		Daemon: d, Context: t.Context(), Target: "http://127.0.0.1:8080",
		Now:     func() time.Time { return fakedaemon.Now },
		Refresh: 20 * time.Millisecond, Frame: 10 * time.Millisecond, Width: 100, Height: 30,
	})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	t.Cleanup(func() { _ = tm.Quit() })
	return bundle{tm: tm, d: d}
}

func deadLetter(id int64) api.Order {
	return fakedaemon.NewOrder(id, 9, "failed", 4, "sim: simulated failure")
}

// TestCursorFollowsItem: a refresh that puts a new dead letter at the top leaves the
// cursor on the order it was on, and the question names that order.
func TestCursorFollowsItem(t *testing.T) {
	b := setupPolling(t)
	b.waitScreen(t, "queue depth")
	b.keys("3")
	b.waitScreen(t, "3 dead letters")
	b.keys("down") // on #39
	b.d.SetDeadLetters(deadLetter(50), deadLetter(42), deadLetter(39), deadLetter(38))
	b.waitScreen(t, "4 dead letters")
	b.keys("r")
	b.waitScreen(t, "Requeue order #39? (y/n)")
	b.keys("y")
	if !b.d.WaitCall("Requeue 39", waitFor) {
		t.Fatalf("Requeue 39 not called: %v", b.d.Calls())
	}
	b.finish(t)
	if got := calledPrefix(b.d, "Requeue"); !slices.Equal(got, []string{"Requeue 39"}) {
		t.Fatalf("requeue calls = %v, want only #39", got)
	}
}

// TestActionSendsWhatWasNamed changes the list between the key that asks and the y:
// the daemon is asked about exactly the ids the question named.
func TestActionSendsWhatWasNamed(t *testing.T) {
	tests := []struct {
		name   string
		view   string
		ready  string
		keys   []string
		prompt string
		change func(*fakedaemon.Daemon)
		seen   string // on screen once the change arrived
		prefix string // the calls compared
		want   []string
		status string
	}{
		{
			name: "requeue one", view: "3", ready: "3 dead letters", keys: []string{"down", "r"},
			prompt: "Requeue order #39?",
			change: func(d *fakedaemon.Daemon) {
				d.SetDeadLetters(deadLetter(51), deadLetter(50), deadLetter(42), deadLetter(39), deadLetter(38))
			},
			seen: "5 dead letters", prefix: "Requeue", want: []string{"Requeue 39"}, status: "✓ order #39 requeued",
		},
		{
			name: "requeue all", view: "3", ready: "3 dead letters", keys: []string{"R"},
			prompt: "Requeue all 3 dead letters (#42, #39, #38)?",
			change: func(d *fakedaemon.Daemon) {
				d.SetDeadLetters(deadLetter(50), deadLetter(42), deadLetter(39), deadLetter(38))
			},
			seen: "4 dead letters", prefix: "Requeue", want: []string{"Requeue 42", "Requeue 39", "Requeue 38"},
			status: "✓ 3 requeued (#42, #39, #38)",
		},
		{
			name: "requeue filtered", view: "3", ready: "3 dead letters", keys: []string{"/", "sim:", "enter", "R"},
			prompt: "Requeue the filtered 2 dead letters (#39, #38)?",
			change: func(d *fakedaemon.Daemon) {
				d.SetDeadLetters(deadLetter(50), deadLetter(42), deadLetter(39), deadLetter(38))
			},
			seen: "4 dead letters", prefix: "Requeue", want: []string{"Requeue 39", "Requeue 38"},
			status: "✓ 2 requeued (#39, #38)",
		},
		{
			name: "purge refused when the list grew", view: "3", ready: "3 dead letters", keys: []string{"P"},
			prompt: "Purge all 3 dead letters (#42, #39, #38)? The orders stay failed.",
			change: func(d *fakedaemon.Daemon) {
				d.SetDeadLetters(deadLetter(50), deadLetter(42), deadLetter(39), deadLetter(38))
			},
			seen: "4 dead letters", prefix: "PurgeDLQ", want: nil,
			status: "✗ purge: the dead-letter list changed since you were asked (4 now): nothing purged",
		},
		{
			name: "purge refused when one left", view: "3", ready: "3 dead letters", keys: []string{"P"},
			prompt: "Purge all 3 dead letters (#42, #39, #38)?",
			change: func(d *fakedaemon.Daemon) { d.SetDeadLetters(deadLetter(42), deadLetter(39)) },
			seen:   "2 dead letters", prefix: "PurgeDLQ", want: nil,
			status: "nothing purged",
		},
		{
			name: "cancel", view: "2", ready: "6 of 6 shown", keys: []string{"c"},
			prompt: "Cancel order #45 (pending)?",
			change: func(d *fakedaemon.Daemon) {
				d.AddOrders(fakedaemon.NewOrder(47, 1, "pending", 0, ""), fakedaemon.NewOrder(46, 1, "pending", 0, ""))
			},
			seen: "8 of 8 shown", prefix: "CancelOrder", want: []string{"CancelOrder 45"}, status: "✓ order #45 cancelled",
		},
		{
			name: "terminate", view: "2", ready: "6 of 6 shown", keys: []string{"down", "down", "T"},
			prompt: "Terminate order #43 and delete its server",
			change: func(d *fakedaemon.Daemon) {
				d.AddOrders(fakedaemon.NewOrder(46, 1, "active", 1, ""))
			},
			seen: "7 of 7 shown", prefix: "TerminateOrder", want: []string{"TerminateOrder 43"}, status: "✓ order #43 terminated",
		},
		{
			name: "reset window", view: "4", ready: "LIMITED", keys: []string{"down", "x"},
			prompt: "Reset the message window of user 7002?",
			change: func(d *fakedaemon.Daemon) {
				d.SetWindows(api.RateWindow{UserID: 7009, Count: 29}, api.RateWindow{UserID: 7001, Count: 28},
					api.RateWindow{UserID: 7002, Count: 27}, api.RateWindow{UserID: 7003, Count: 3})
			},
			seen: "4 open windows", prefix: "ResetRateLimit", want: []string{"ResetRateLimit 7002"}, status: "✓ user 7002's window reset",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setupPolling(t)
			b.waitScreen(t, "queue depth")
			b.keys(tt.view)
			b.waitScreen(t, tt.ready)
			b.keys(tt.keys...)
			b.waitScreen(t, tt.prompt, "(y/n)")
			tt.change(b.d)
			b.waitScreen(t, tt.seen)
			b.keys("y")
			b.waitScreen(t, tt.status)
			b.finish(t)
			if got := calledPrefix(b.d, tt.prefix); !slices.Equal(got, tt.want) {
				t.Fatalf("%s calls = %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
}

// TestTopRowsAfterSortAndFilter scrolls far down a long list, then sorts or filters:
// the list is shown from its first row, none hidden above the screen.
func TestTopRowsAfterSortAndFilter(t *testing.T) {
	tests := []struct {
		name  string
		keys  []string
		ready string
		first string // the first row on screen
		id    int64
	}{
		{"sort oldest", []string{"o"}, "sort oldest", "pending", 1},
		{"sort status", []string{"o", "o", "o"}, "sort status", "active", 60},
		{"filter", []string{"/", "pending", "enter"}, "30 of 60 shown", "pending", 59},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, manyOrders(60))
			b.waitScreen(t, "queue depth")
			b.keys("2")
			b.waitScreen(t, "60 of 60 shown")
			for range 40 {
				b.keys("down")
			}
			b.keys(tt.keys...)
			b.waitScreen(t, tt.ready)
			out := b.finish(t)
			lines := strings.Split(out, "\n")
			// header, head line, column titles, rule, then the first row.
			if len(lines) < 5 || !row(tt.id, tt.first).MatchString(lines[4]) {
				t.Fatalf("first row is not #%d %s:\n%s", tt.id, tt.first, out)
			}
		})
	}
}

// TestMoneyFollowsCatalogue: the detail shows the price in the catalogue's currency
// and its minor unit, however the daemon's catalogue is set.
func TestMoneyFollowsCatalogue(t *testing.T) {
	tests := []struct {
		currency string
		want     string
	}{
		{"KRW", "price      5,000 KRW"},
		{"USD", "price      50.00 USD"},
		{"", "price      5,000"}, // not read yet: no minor unit guessed
	}
	for _, tt := range tests {
		t.Run(tt.currency, func(t *testing.T) {
			b := setup(t, func(d *fakedaemon.Daemon) { d.Catalog.Currency = tt.currency })
			b.waitScreen(t, "queue depth")
			b.keys("2")
			b.waitScreen(t, "6 of 6 shown")
			b.keys("enter")
			b.waitScreen(t, "order #45", tt.want)
			b.finish(t)
		})
	}
}

// TestPurgeRefusedUnderFilter: the daemon purges its whole list, so with a filter on
// there is nothing the console could send that matches what is shown.
func TestPurgeRefusedUnderFilter(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("3")
	b.waitScreen(t, "plan sold out")
	b.keys("/", "sim:", "enter", "P")
	b.waitScreen(t, "purge empties the whole dead-letter list: clear the filter (esc) first")
	b.keys("y")
	out := b.finish(t)
	if strings.Contains(out, "(y/n)") || len(calledPrefix(b.d, "PurgeDLQ")) != 0 {
		t.Fatalf("a filtered purge was offered or sent: %v\n%s", b.d.Calls(), out)
	}
}

// TestBulkPastWhatIsShown: with more dead letters than the page reads, a bulk requeue
// says it takes the newest shown, and purge, which would take them all, is refused.
func TestBulkPastWhatIsShown(t *testing.T) {
	many := func(d *fakedaemon.Daemon) {
		var dlq []api.Order
		for id := int64(130); id > 0; id-- {
			dlq = append(dlq, deadLetter(id))
		}
		d.SetDeadLetters(dlq...)
	}
	tests := []struct {
		name, key, want, call string
		n                     int
	}{
		{"requeue", "R", "Requeue the newest 100 dead letters (#130, #129, #128, #127, #126, #125, and 94 more)?", "Requeue", 100},
		{"purge", "P", "purge empties the whole dead-letter list, more than the 100 shown", "PurgeDLQ", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, many)
			b.waitScreen(t, "queue depth")
			b.keys("3")
			b.waitScreen(t, "more than 100 dead letters: the newest 100 shown")
			b.keys(tt.key)
			b.waitScreen(t, tt.want)
			b.keys("y")
			if tt.n > 0 {
				b.waitScreen(t, "✓ 100 requeued")
			}
			b.finish(t)
			got := calledPrefix(b.d, tt.call)
			if len(got) != tt.n || (tt.n > 0 && (got[0] != "Requeue 130" || got[len(got)-1] != "Requeue 31")) {
				t.Fatalf("%s calls: %d (%v…), want %d from #130 to #31", tt.call, len(got), got[:min(len(got), 3)], tt.n)
			}
		})
	}
}
