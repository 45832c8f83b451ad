package tui_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

// TestNewViewActions: each new view's action asks a question naming exactly what it
// will act on, and y sends exactly that; the lists change between the question and
// the y, as a busy daemon's do.
func TestNewViewActions(t *testing.T) {
	newComment := api.Comment{ID: 15, Slug: "hello-hangar", Name: "late", Content: "arrived after the question", CreatedAt: fakedaemon.Now}
	tests := []struct {
		name    string
		prepare func(*fakedaemon.Daemon)
		view    string
		ready   string
		keys    []string
		prompt  string
		change  func(*fakedaemon.Daemon)
		prefix  string
		want    []string
		status  string
	}{
		{
			name: "delete the comment named", view: "8", ready: "cheap pills", keys: []string{"down", "D"},
			prompt: `Delete comment #13 by spammer on badger-ttl ("cheap pills at`,
			change: func(d *fakedaemon.Daemon) {
				d.SetComments(append([]api.Comment{newComment}, d.Blogs...)...)
			},
			prefix: "DeleteComment", want: []string{"DeleteComment 13"}, status: "comment #13 deleted",
		},
		{
			name: "deposit names the user and the amount in KRW", view: "2", ready: "6 of 6 shown", keys: []string{"u", "d", "5,000", "enter"},
			prompt: "Deposit 5,000 KRW to user 7000012341 (available 15,000 KRW)?",
			change: func(d *fakedaemon.Daemon) { d.AddOrders(fakedaemon.NewOrder(46, 7, "pending", 0, "")) },
			prefix: "Deposit", want: []string{"Deposit 7000012341 5000"}, status: "5,000 KRW deposited to user 7000012341: available 20,000 KRW",
		},
		{
			name:    "deposit in a currency with cents",
			prepare: func(d *fakedaemon.Daemon) { d.Catalog.Currency = "USD" },
			view:    "7", ready: "no user shown", keys: []string{"u", "7000012341", "enter", "d", "12.5", "enter"},
			prompt: "Deposit 12.50 USD to user 7000012341",
			prefix: "Deposit", want: []string{"Deposit 7000012341 1250"}, status: "12.50 USD deposited",
		},
		{
			name: "run the reconciler", view: "0", ready: "60123457", keys: []string{"r"},
			prompt: "(now: linode 60123457)",
			prefix: "RunReconcile", want: []string{"RunReconcile"}, status: "reconciled: 1 duplicate and 1 orphan found, 1 servers deleted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var prep []func(*fakedaemon.Daemon)
			if tt.prepare != nil {
				prep = append(prep, tt.prepare)
			}
			b := setupPolling(t, prep...)
			b.waitScreen(t, "queue depth")
			b.keys(tt.view)
			b.waitScreen(t, tt.ready)
			for _, k := range tt.keys {
				b.keys(k)
				if k == "u" && tt.view == "2" {
					b.waitScreen(t, "ledger (4)") // the user view must be up before d
				}
			}
			b.waitScreen(t, tt.prompt, "(y/n)")
			if tt.change != nil {
				tt.change(b.d)
				b.d.WaitCall("Outbox", waitFor) // a refresh has come and gone under the question
			}
			b.keys("y")
			b.waitScreen(t, tt.status)
			b.finish(t)
			if got := calledPrefix(b.d, tt.prefix); !slices.Equal(got, tt.want) {
				t.Fatalf("%s calls = %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
}

func TestDepositRefusesWhatIsNotAnAmount(t *testing.T) {
	tests := []struct{ typed, notice string }{
		{"12.5", "KRW has no minor unit"},
		{"-3", "not an amount"},
		{"0", "above zero"},
	}
	for _, tt := range tests {
		t.Run(tt.typed, func(t *testing.T) {
			b := setup(t)
			b.waitScreen(t, "queue depth")
			b.keys("7", "u", "7000012341", "enter")
			b.waitScreen(t, "ledger (4)")
			b.keys("d", tt.typed, "enter")
			b.waitScreen(t, tt.notice)
			b.finish(t)
			if got := calledPrefix(b.d, "Deposit"); len(got) != 0 {
				t.Fatalf("deposit sent for %q: %v", tt.typed, got)
			}
		})
	}
}

// TestTypedUserIDIsNotAKey: digits and q typed as a user id go to the prompt, not to
// the tab bar or quit.
func TestTypedUserIDIsNotAKey(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("7", "u", "7003", "q", "enter")
	b.waitScreen(t, `"7003q" is not a user id`)
	b.keys("u", "7003", "enter")
	if !b.d.WaitCall("User 7003", waitFor) {
		t.Fatalf("User 7003 not read: %v", b.d.Calls())
	}
	if out := b.finish(t); !strings.Contains(out, "user 7003") {
		t.Fatalf("user view not on 7003:\n%s", out)
	}
}

func TestMarkInquiryRead(t *testing.T) {
	b := setupPolling(t)
	b.waitScreen(t, "queue depth")
	b.keys("8", "i")
	b.waitScreen(t, "광고 문의")
	b.d.SetInquiries(append([]api.Inquiry{{ID: 6, Name: "new", Email: "n@example.com", Message: "came in later", CreatedAt: fakedaemon.Now}}, b.d.Inqs...)...)
	b.waitScreen(t, "came in later")
	b.keys("down", "m") // the cursor followed #5 down when #6 arrived above it; down is #4, read already
	b.waitScreen(t, "inquiry #4 is already read")
	b.keys("k", "m")
	b.waitScreen(t, "inquiry #5 marked read")
	b.finish(t)
	if got := calledPrefix(b.d, "MarkInquiryRead"); !slices.Equal(got, []string{"MarkInquiryRead 5"}) {
		t.Fatalf("mark calls = %v", got)
	}
}

// TestLogPaneLive: new daemon lines appear without a key, the level filter asks the
// daemon for that level and hides what is below it.
func TestLogPaneLive(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("9")
	b.waitScreen(t, "order dead-lettered", "outbox scan")
	b.d.AddLogs(api.LogRecord{Time: fakedaemon.Now, Level: "WARN", Msg: "disk almost full", Attrs: "free=1.2GiB"})
	b.waitScreen(t, "disk almost full")
	b.keys("l") // info and above
	if !b.d.WaitCall("Logs 0 INFO", waitFor) {
		t.Fatalf("level not asked of the daemon: %v", b.d.Calls())
	}
	b.waitScreen(t, "level INFO and above")
	out := b.finish(t)
	if strings.Contains(out, "outbox scan") {
		t.Fatalf("a debug line is shown at level info:\n%s", out)
	}
}

// TestUserViewLive: the shown user's message window follows the live feed.
func TestUserViewLive(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("7", "u", "7000012341", "enter")
	b.waitScreen(t, "message window 2/30")
	b.d.Send(api.Event{Type: api.EventRateLimit, RateLimit: &api.RateLimitEvent{At: fakedaemon.Now, UserID: 7000012341, Count: 30, Limited: true}})
	b.d.Send(api.Event{Type: api.EventRateLimit, RateLimit: &api.RateLimitEvent{At: fakedaemon.Now, UserID: 7002, Count: 1}})
	b.waitScreen(t, "message window 30/30", "LIMITED")
	b.finish(t)
}
