package tui_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

// changes are the Daemon methods that change something: a viewer's console calls none.
var changes = []string{"CancelOrder", "TerminateOrder", "Requeue", "PurgeDLQ", "ResetRateLimit", "Deposit",
	"DeleteComment", "MarkInquiryRead", "RunReconcile", "PauseQueue", "ResumeQueue", "CreateBroadcast", "CancelBroadcast"}

func changeCalls(d *fakedaemon.Daemon) []string {
	var out []string
	for _, c := range d.Calls() {
		method, _, _ := strings.Cut(c, " ")
		if slices.Contains(changes, method) {
			out = append(out, c)
		}
	}
	return out
}

// A console the daemon calls a viewer says so in its header and refuses every action
// with a message naming it, without sending anything.
func TestViewerConsoleRefusesEveryAction(t *testing.T) {
	tests := []struct {
		name, view, ready string
		keys              []string
		refusal           string
	}{
		{"cancel", "2", "6 of 6 shown", []string{"c"}, "Cancel order #45"},
		{"terminate", "2", "6 of 6 shown", []string{"down", "down", "T"}, "order #43"},
		{"requeue", "3", "plan sold out", []string{"r"}, "Requeue order #42"},
		{"requeue all", "3", "plan sold out", []string{"R"}, "Requeue"},
		{"purge", "3", "plan sold out", []string{"P"}, "Purge"},
		{"reset a window", "4", "LIMITED", []string{"x"}, "Reset the message window"},
		{"deposit", "2", "6 of 6 shown", []string{"u", "d", "5000", "enter"}, "Deposit 5,000 KRW"},
		{"delete a comment", "8", "cheap pills", []string{"down", "D"}, "Delete comment #13"},
		{"mark an inquiry read", "8", "cheap pills", []string{"i", "m"}, "was not marked"},
		{"run the reconciler", "0", "60123457", []string{"r"}, "read-only"},
		{"pause", "", "", []string{"p"}, "Pause provisioning"},
		{"new broadcast", "0", "60123457", []string{"tab", "n"}, "sends no broadcast"},
		{"cancel a broadcast", "0", "60123457", []string{"tab", "c"}, "Cancel broadcast #3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, func(d *fakedaemon.Daemon) { d.SetWho("viewer", "viewer token") })
			b.waitScreen(t, "queue depth", "viewer: read-only")
			if tt.view != "" {
				b.keys(tt.view)
				b.waitScreen(t, tt.ready)
			}
			for _, k := range tt.keys {
				b.keys(k)
				switch {
				case k == "u":
					b.waitScreen(t, "ledger (4)")
				case k == "i":
					b.waitScreen(t, "RSS feed")
				case k == "tab":
					b.waitScreen(t, "1 under way")
				}
			}
			b.waitScreen(t, "read-only", tt.refusal)
			b.keys("y") // no question is open: y must do nothing either
			time.Sleep(30 * time.Millisecond)
			out := b.finish(t)
			if strings.Contains(out, "(y/n)") {
				t.Errorf("a viewer was asked to confirm:\n%s", out)
			}
			if got := changeCalls(b.d); len(got) != 0 {
				t.Fatalf("a viewer's console sent %v", got)
			}
		})
	}
}

// An operator's console has no role tag, and p pauses after a question saying what it
// does; the overview then says paused and since when, and p asks to resume.
func TestPauseKey(t *testing.T) {
	b := setupPolling(t)
	b.waitScreen(t, "queue depth")
	b.keys("p")
	b.waitScreen(t, "Pause provisioning? Orders are still taken", "(y/n)")
	b.keys("y")
	b.waitScreen(t, "provisioning paused", "PAUSED since 19:40 UTC")
	b.keys("p")
	b.waitScreen(t, "Resume provisioning? The 12 orders waiting start now.")
	b.keys("y")
	b.waitScreen(t, "provisioning resumed")
	out := b.finish(t)
	if strings.Contains(out, "PAUSED") || strings.Contains(out, "read-only") {
		t.Errorf("after resuming an operator's overview shows:\n%s", out)
	}
	if got := changeCalls(b.d); !slices.Equal(got, []string{"PauseQueue", "ResumeQueue"}) {
		t.Fatalf("calls = %v, want PauseQueue then ResumeQueue", got)
	}
}
