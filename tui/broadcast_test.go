package tui_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

// openBroadcasts goes to the broadcasts view: the eleventh, one tab past the tenth.
func openBroadcasts(t *testing.T, b bundle) {
	t.Helper()
	b.waitScreen(t, "queue depth")
	b.keys("0")
	b.waitScreen(t, "60123457")
	b.keys("tab")
	b.waitScreen(t, "messages to every user", "1 under way")
}

// waitPolls waits until the console has read the broadcasts n more times, so that
// whatever changed in the fake has reached the view.
func waitPolls(t *testing.T, d *fakedaemon.Daemon, n int) {
	t.Helper()
	count := func() int {
		c := 0
		for _, call := range d.Calls() {
			if call == "Broadcasts" {
				c++
			}
		}
		return c
	}
	want := count() + n
	deadline := time.Now().Add(waitFor)
	for count() < want {
		if time.Now().After(deadline) {
			t.Fatalf("the console read the broadcasts %d times, want %d", count(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func createCalls(d *fakedaemon.Daemon) []string { return calledPrefix(d, "CreateBroadcast") }

// The text a broadcast sends is the text its preview showed, byte for byte: typed
// keys (q and digits included) go to the editor, the preview shows the text trimmed as
// the daemon trims it, and neither a re-read nor a live event between the question
// and the y changes what is sent.
func TestBroadcastSendsWhatWasPreviewed(t *testing.T) {
	b := setupPolling(t)
	openBroadcasts(t, b)
	b.keys("n")
	b.waitScreen(t, "new broadcast", "0/4096 characters")
	lines := []string{"  Q&A at 2pm: the Seoul region is back  ", "Orders placed during the outage were kept.", "  새 주문은 곧 만들어집니다 <b>감사합니다</b> & 1/4  "}
	for i, l := range lines {
		if i > 0 {
			b.keys("enter")
		}
		b.keys(l)
	}
	typed := strings.Join(lines, "\n")
	want := strings.TrimSpace(typed)
	n := len([]rune(want))
	b.keys("ctrl+s")
	b.waitScreen(t, "preview", "(y/n)", "Send broadcast \"Q&A at 2pm: the Seoul region is back", "Orders placed during the outage were kept.",
		"새 주문은 곧 만들어집니다 <b>감사합니다</b> & 1/4", strconv.Itoa(n)+" characters")

	// The list changes under the open question: a new broadcast arrives both by a
	// re-read and by a live event.
	other := api.Broadcast{ID: 9, Text: "someone else's", State: "sending", Total: 10, UpdatedAt: fakedaemon.Now}
	b.d.SetBroadcasts(append([]api.Broadcast{other}, b.d.Casts...)...)
	b.d.Send(api.Event{Type: api.EventBroadcast, Broadcast: &other})
	waitPolls(t, b.d, 3)
	b.keys("y")
	b.waitScreen(t, "✓ broadcast #10 queued: 1250 recipients")
	out := b.finish(t)
	if got := b.d.CreatedTexts(); !slices.Equal(got, []string{want}) {
		t.Fatalf("sent %q, want exactly the previewed %q", got, want)
	}
	if !strings.Contains(out, "#10") || strings.Contains(out, "new broadcast ·") {
		t.Errorf("after sending, the list with the new broadcast should show:\n%s", out)
	}
}

// n at the question goes back to the draft, kept; esc leaves it, kept; the next n
// finds it, and y then sends it.
func TestBroadcastDeclinedKeepsDraft(t *testing.T) {
	b := setup(t)
	openBroadcasts(t, b)
	b.keys("n", "maintenance tonight")
	b.waitScreen(t, "19/4096 characters")
	b.keys("ctrl+d")
	b.waitScreen(t, "Send broadcast \"maintenance tonight\" (19 characters)", "(y/n)")
	b.keys("n")
	b.waitScreen(t, "cancelled")
	b.keys(" at 3")
	b.waitScreen(t, "24/4096 characters")
	b.keys("esc")
	b.waitScreen(t, "enter details")
	b.keys("n")
	b.keys("ctrl+s")
	b.waitScreen(t, "Send broadcast \"maintenance tonight at 3\" (24 characters)")
	b.keys("y")
	b.waitScreen(t, "✓ broadcast #4 queued")
	b.finish(t)
	if got := createCalls(b.d); !slices.Equal(got, []string{`CreateBroadcast "maintenance tonight at 3"`}) {
		t.Fatalf("create calls = %v", got)
	}
}

// The daemon's refusals show as it words them, and the draft stays to be fixed; an
// empty or too long text is refused before anything is sent.
func TestBroadcastRefusals(t *testing.T) {
	t.Run("no recipients 409", func(t *testing.T) {
		b := setup(t, func(d *fakedaemon.Daemon) { d.SetRecipients(0) })
		openBroadcasts(t, b)
		b.keys("n", "hello", "ctrl+s")
		b.waitScreen(t, "(y/n)")
		b.keys("y")
		b.waitScreen(t, `✗ send broadcast "hello": nobody has talked to the bot yet (409)`)
		out := finishEditing(t, b)
		for _, want := range []string{`✗ send broadcast "hello": nobody has talked to the bot yet (409)`, "new broadcast", "5/4096 characters", "hello"} {
			if !strings.Contains(out, want) {
				t.Errorf("after a 409 the draft and the reason should show, %q missing:\n%s", want, out)
			}
		}
	})
	t.Run("bad text 400", func(t *testing.T) {
		b := setup(t, func(d *fakedaemon.Daemon) {
			d.Fail("CreateBroadcast", &api.Error{Status: 400, Code: "bad_text", Message: "the text must be 1 to 4096 characters of UTF-8 after trimming"})
		})
		openBroadcasts(t, b)
		b.keys("n", "hello", "ctrl+s")
		b.waitScreen(t, "(y/n)")
		b.keys("y")
		b.waitScreen(t, "the text must be 1 to 4096 characters of UTF-8 after trimming (400)")
		finishEditing(t, b)
	})
	t.Run("empty and too long never sent", func(t *testing.T) {
		b := setup(t)
		openBroadcasts(t, b)
		b.keys("n", "   ", "ctrl+s")
		b.waitScreen(t, "the broadcast is empty")
		b.tm.Send(pasteMsg(strings.Repeat("가", 4097)))
		b.waitScreen(t, "4097/4096 characters, 1 too many")
		b.keys("ctrl+s")
		b.waitScreen(t, "4097 characters, 1 over Telegram's 4096")
		out := finishEditing(t, b)
		if strings.Contains(out, "(y/n)") {
			t.Errorf("asked to send a text the daemon refuses:\n%s", out)
		}
		if got := createCalls(b.d); len(got) != 0 {
			t.Fatalf("sent %v", got)
		}
	})
}

// c names the broadcast under the cursor; new broadcasts arriving above it (re-read
// and live) leave the cursor on it, and y cancels the id named.
func TestBroadcastCancelSendsNamedID(t *testing.T) {
	b := setupPolling(t)
	openBroadcasts(t, b)
	b.keys("c")
	b.waitScreen(t, `Cancel broadcast #3 ("서버 점검 안내`, "432 of 1250 done)?", "(y/n)")
	b4 := api.Broadcast{ID: 4, Text: "second", State: "queued", Total: 1250, UpdatedAt: fakedaemon.Now}
	b5 := api.Broadcast{ID: 5, Text: "third", State: "queued", Total: 1250, UpdatedAt: fakedaemon.Now}
	b.d.SetBroadcasts(append([]api.Broadcast{b5, b4}, b.d.Casts...)...)
	b.d.Send(api.Event{Type: api.EventBroadcast, Broadcast: &b5})
	b.waitScreen(t, "3 under way")
	b.keys("y")
	b.waitScreen(t, "✓ broadcast #3 cancelled: 412 of 1250 sent")
	b.finish(t)
	if got := calledPrefix(b.d, "CancelBroadcast"); !slices.Equal(got, []string{"CancelBroadcast 3"}) {
		t.Fatalf("cancel calls = %v, want only #3", got)
	}
}

// A broadcast that ended is not offered for cancelling; one the daemon refuses (it
// ended meanwhile) shows the 409 as it comes.
func TestBroadcastCancelEnded(t *testing.T) {
	b := setup(t)
	openBroadcasts(t, b)
	b.keys("down", "c")
	b.waitScreen(t, "broadcast #2 is done: nothing to cancel")
	b.keys("up", "c")
	b.waitScreen(t, "Cancel broadcast #3")
	b.d.Fail("CancelBroadcast", &api.Error{Status: 409, Code: "conflict", Message: "the broadcast has already finished or been cancelled"})
	b.keys("y")
	b.waitScreen(t, "✗ cancel broadcast #3: the broadcast has already finished or been cancelled (409)")
	b.finish(t)
}

// Progress comes live from the broadcast event: counts, state and new broadcasts.
func TestBroadcastLiveProgress(t *testing.T) {
	b := setup(t)
	openBroadcasts(t, b)
	b.d.Send(api.Event{Type: api.EventBroadcast, Broadcast: &api.Broadcast{ID: 3, Text: "서버 점검 안내", State: "sending", Total: 1250,
		Sent: 880, Failed: 4, Blocked: 31, Next: 915, By: "alice", CreatedAt: fakedaemon.Now.Add(-4 * time.Minute), UpdatedAt: fakedaemon.Now}})
	b.waitScreen(t, "915/1250", "880", "31")
	b.d.Send(api.Event{Type: api.EventBroadcast, Broadcast: &api.Broadcast{ID: 7, Text: "from the API", State: "queued", Total: 1300,
		CreatedAt: fakedaemon.Now, UpdatedAt: fakedaemon.Now}})
	b.waitScreen(t, "0/1300", "4 shown", "2 under way")
	b.finish(t)
}

// finishEditing quits with ctrl+c, the one key an open editor does not take, and
// returns the last frame.
func finishEditing(t *testing.T, b bundle) string {
	t.Helper()
	b.tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	return b.tm.FinalModel(t, teatest.WithFinalTimeout(waitFor)).View()
}

// pasteMsg is text pasted at once, as a terminal's bracketed paste delivers it.
func pasteMsg(s string) tea.KeyMsg {
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true}
}
