package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

func pause(t *testing.T, env *hangartest.Env, paused bool) store.QueuePause {
	t.Helper()
	do := env.Engine.PauseQueue
	if !paused {
		do = env.Engine.ResumeQueue
	}
	st, _, err := do("test")
	if err != nil || st.Paused != paused {
		t.Fatalf("pause(%v) = %+v, %v", paused, st, err)
	}
	return st
}

// While paused nothing starts: neither a new order nor a retry that falls due, whose
// attempt count stays as it was; on resume both start, and the retry is the one it
// would have been.
func TestPauseHoldsAttemptsAndRetries(t *testing.T) {
	p := newScripted(nil)
	p.fail = func(n int) error {
		if n == 1 {
			return errRetryable
		}
		return nil
	}
	env := setup(t, engine.QueueConfig{}, p)
	retrying := env.Order(t, 42, "sim-nano", "tokyo")
	hangartest.WaitFor(t, 5*time.Second, "the first attempt to fail and schedule a retry", func() bool {
		o, _ := env.Store.GetOrder(retrying)
		return o.Status == store.OrderPending && o.Attempts == 1
	})

	at := env.Clock.Now()
	st := pause(t, env, true)
	if !st.Since.Equal(at) {
		t.Fatalf("paused since %v, want %v", st.Since, at)
	}
	fresh := env.Order(t, 42, "sim-nano", "tokyo")
	env.Clock.Advance(time.Minute)    // well past the 2 s retry
	time.Sleep(60 * time.Millisecond) // a dozen dispatcher ticks
	if n := len(p.createTimes()); n != 1 {
		t.Fatalf("%d provider calls while paused, want only the one before the pause", n)
	}
	for id, attempts := range map[int64]int{retrying: 1, fresh: 0} {
		if o, _ := env.Store.GetOrder(id); o.Status != store.OrderPending || o.Attempts != attempts {
			t.Fatalf("order %d while paused: %s after %d attempts, want pending after %d", id, o.Status, o.Attempts, attempts)
		}
	}
	stats := queueStats(t, env)
	if !stats.Paused || stats.PausedSince == nil || !stats.PausedSince.Equal(at) || stats.Depth != 2 || stats.InFlight != 0 {
		t.Fatalf("stats while paused: paused %v since %v, depth %d, in flight %d", stats.Paused, stats.PausedSince, stats.Depth, stats.InFlight)
	}
	hangartest.WaitFor(t, 5*time.Second, "hangar_queue_paused to say 1", func() bool { return env.Metric(t, "hangar_queue_paused") == 1 })
	if _, changed, _ := env.Engine.PauseQueue("again"); changed {
		t.Fatal("pausing a paused queue changed it (and would move 'since')")
	}

	pause(t, env, false)
	if o := env.WaitStatus(t, retrying, store.OrderActive, 5*time.Second); o.Attempts != 2 {
		t.Fatalf("the retried order went active after %d attempts, want 2", o.Attempts)
	}
	if o := env.WaitStatus(t, fresh, store.OrderActive, 5*time.Second); o.Attempts != 1 {
		t.Fatalf("the order taken while paused went active after %d attempts, want 1", o.Attempts)
	}
	if stats := queueStats(t, env); stats.Paused || stats.PausedSince != nil {
		t.Fatalf("stats after resume still paused: %+v", stats)
	}
}

// The pause is in the store: an engine started on the same data stays paused.
func TestPauseSurvivesRestart(t *testing.T) {
	first := hangartest.Start(t, hangartest.Options{})
	at := pause(t, first, true).Since
	first.Stop()

	env := hangartest.Start(t, hangartest.Options{Dir: first.Dir})
	env.Deposit(t, 42, 1_000_000)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	time.Sleep(60 * time.Millisecond)
	if o, _ := env.Store.GetOrder(id); o.Status != store.OrderPending || o.Attempts != 0 {
		t.Fatalf("after a restart while paused the order is %s after %d attempts", o.Status, o.Attempts)
	}
	if stats := queueStats(t, env); !stats.Paused || !stats.PausedSince.Equal(at) {
		t.Fatalf("after a restart: paused %v since %v, want since %v", stats.Paused, stats.PausedSince, at)
	}
	pause(t, env, false)
	env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
}

// A user confirming an order while provisioning is paused is told it waits, not that
// their server is being created, and is told again when it is ready.
func TestBotSaysProvisioningIsPaused(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 500, 20000)
	pause(t, env, true)
	var next int64 = 3000
	c := chat{t: t, env: env, user: 500, next: &next}
	c.send("/order sim-nano tokyo")
	quote := c.expect(`a month\?`)
	var kb struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(quote.ReplyMarkup), &kb); err != nil || len(kb.InlineKeyboard) == 0 {
		t.Fatalf("confirm keyboard missing: %q", quote.ReplyMarkup)
	}
	c.press(500, kb.InlineKeyboard[0][0].CallbackData)
	received := c.expect(`Order <b>#(\d+)</b> received\. Server creation is paused`)
	id := mustOrderID(t, received.Text)
	time.Sleep(60 * time.Millisecond)
	if o, _ := env.Store.GetOrder(id); o.Status != store.OrderPending {
		t.Fatalf("order taken while paused is %s, want pending", o.Status)
	}
	pause(t, env, false)
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	c.expect(`Your server is ready`)
}
