package http_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// A wall clock stepped back (NTP correcting a clock that ran ahead, a VPS booted with a
// wrong RTC, an operator's `date -s`) must not hold a user for longer than one window.
// The user's actor keeps the window's end as an absolute time and refuses every message
// while now is before it: after the clock goes back one hour, a user who had used up
// a 60 s window is refused (silently, the slow-down reply was already sent) for 61
// minutes, and a store-backed window survives restarts to do the same.
func TestRateWindowSurvivesAClockSteppedBack(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 2, RateWindow: time.Minute})
	const user = 5151
	id := int64(0)
	send := func() {
		id++
		if r := env.PostUpdate(t, hangartest.Update(id, user, "/help")); r.Status != 200 {
			t.Fatalf("update %d: status %d %s", id, r.Status, r.Body)
		}
	}
	send()
	send()
	send() // the third earns the slow-down notice
	env.Settle(t)
	if n := len(env.Telegram.Messages()); n != 3 {
		t.Fatalf("got %d replies, want 2 answers + 1 slow-down", n)
	}

	// The clock is stepped back an hour, then a minute and a half of real time passes:
	// longer than any window, so the user may write again.
	env.Clock.Advance(-time.Hour)
	env.Clock.Advance(90 * time.Second)
	send()
	env.Settle(t)
	if n := len(env.Telegram.Messages()); n != 4 {
		w, _ := env.Store.LoadWindow(user)
		t.Fatalf("90 s after the clock was stepped back an hour the user is still refused (%d replies, want 4): "+
			"the window ends at %v, %v from now, for a window of 1m",
			n, w.ResetAt, w.ResetAt.Sub(env.Clock.Now()))
	}
}
