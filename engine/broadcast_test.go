package engine_test

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/engine/telegram"
	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

type broadcastEnv struct {
	st  *store.Store
	eng *engine.Engine
}

// startBroadcastEnv runs a real store in dir and an engine sending to tg, with the
// overall Telegram limit at overall messages a second.
func startBroadcastEnv(t *testing.T, dir string, tg *telegramfake.Server, overall float64, cfg engine.BroadcastConfig) *broadcastEnv {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(store.Options{Dir: dir, SyncWrites: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	client, err := telegram.New(hangartest.BotToken, tg.URL())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Logger: log, Registry: prometheus.NewRegistry(),
		SendInterval: time.Duration(float64(time.Second) / overall), Broadcast: cfg,
		Providers: map[string]engine.Provider{"sim": cloud.NewSim(cloud.SimConfig{})}}, st, client)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	env := &broadcastEnv{st: st, eng: eng}
	t.Cleanup(env.stop)
	return env
}

func (e *broadcastEnv) stop() {
	if e.eng == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.eng.Stop(ctx)
	_ = e.st.Close()
	e.eng = nil
}

func seeUsers(t *testing.T, st *store.Store, first int64, n int) []int64 {
	t.Helper()
	users := make([]int64, n)
	for i := range users {
		users[i] = first + int64(i)
	}
	if err := st.MarkUsersSeen(users...); err != nil {
		t.Fatal(err)
	}
	return users
}

func waitBroadcast(t *testing.T, eng *engine.Engine, id int64, timeout time.Duration) store.Broadcast {
	t.Helper()
	var b store.Broadcast
	hangartest.WaitFor(t, timeout, "the broadcast to finish", func() bool {
		var err error
		b, err = eng.GetBroadcast(id)
		return err == nil && !b.Active()
	})
	return b
}

// maxInWindow is the most messages received within any window w.
func maxInWindow(msgs []telegramfake.Message, w time.Duration) int {
	at := make([]time.Time, len(msgs))
	for i, m := range msgs {
		at[i] = m.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	best, lo := 0, 0
	for hi := range at {
		for at[hi].Sub(at[lo]) >= w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

func textCounts(msgs []telegramfake.Message, text string) map[int64]int {
	n := map[int64]int{}
	for _, m := range msgs {
		if m.Text == text {
			n[m.ChatID]++
		}
	}
	return n
}

// A broadcast to 1,000 users reaches each exactly once, never faster than its rate in
// any second (measured at the fake's receive times), and users who answer 403 are
// marked blocked and left out of the next broadcast.
func TestBroadcastThousandUsersPacedOnceEach(t *testing.T) {
	const (
		users   = 1000
		rate    = 400 // broadcast messages a second
		overall = 500 // all Telegram messages a second
	)
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	env := startBroadcastEnv(t, t.TempDir(), tg, overall, engine.BroadcastConfig{Rate: rate, Batch: 50})
	all := seeUsers(t, env.st, 100000, users)
	blocked := []int64{all[3], all[500], all[999]}
	tg.Block(blocked...)

	b, err := env.eng.CreateBroadcast("  maintenance tonight  ", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if b.Text != "maintenance tonight" || b.Total != users || b.By != "admin" {
		t.Fatalf("created %+v", b)
	}
	b = waitBroadcast(t, env.eng, b.ID, 30*time.Second)
	if b.State != store.BroadcastDone || b.Sent != users-len(blocked) || b.Blocked != len(blocked) || b.Failed != 0 || b.Next != users {
		t.Fatalf("finished as %+v", b)
	}
	msgs := tg.Messages()
	got := textCounts(msgs, "maintenance tonight")
	for i, u := range all {
		want := 1
		if u == blocked[0] || u == blocked[1] || u == blocked[2] {
			want = 0
		}
		if got[u] != want {
			t.Fatalf("user %d (#%d) got the broadcast %d times, want %d", u, i, got[u], want)
		}
	}
	// The limiter admits at most rate sends in any second; the network may bunch a
	// few arrivals together.
	if peak := maxInWindow(msgs, time.Second); peak > rate+rate/20 {
		t.Fatalf("%d messages arrived within one second; the broadcast rate is %d/s", peak, rate)
	}
	for _, u := range blocked {
		if ok, err := env.st.UserBlocked(u); err != nil || !ok {
			t.Fatalf("user %d answered 403 but is not marked blocked (%v)", u, err)
		}
	}

	second, err := env.eng.CreateBroadcast("second", "")
	if err != nil {
		t.Fatal(err)
	}
	if second.Total != users-len(blocked) {
		t.Fatalf("the second broadcast has %d recipients, want %d: blocked users must be skipped", second.Total, users-len(blocked))
	}
	second = waitBroadcast(t, env.eng, second.ID, 30*time.Second)
	if second.Blocked != 0 || second.Sent != users-len(blocked) {
		t.Fatalf("second broadcast %+v: blocked users were tried again", second)
	}
}

// Two broadcasts back to back to the same few users: no chat gets two messages within
// a second, and a 429 pauses the broadcast for retry_after without losing anyone.
func TestBroadcastPerChatGapAndRetryAfter(t *testing.T) {
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	env := startBroadcastEnv(t, t.TempDir(), tg, 500, engine.BroadcastConfig{Rate: 400})
	users := seeUsers(t, env.st, 42, 3)
	tg.Throttle(1, 1)
	created := time.Now()
	a, err := env.eng.CreateBroadcast("one", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.eng.CreateBroadcast("two", "")
	if err != nil {
		t.Fatal(err)
	}
	waitBroadcast(t, env.eng, a.ID, 10*time.Second)
	if b = waitBroadcast(t, env.eng, b.ID, 10*time.Second); b.Sent != len(users) {
		t.Fatalf("second broadcast %+v", b)
	}
	msgs := tg.Messages()
	if first := msgs[0].At.Sub(created); first < 900*time.Millisecond {
		t.Fatalf("the first message arrived %v after a 429 with retry_after 1s", first)
	}
	last := map[int64]time.Time{}
	for _, m := range msgs {
		if prev, ok := last[m.ChatID]; ok && m.At.Sub(prev) < 900*time.Millisecond {
			t.Fatalf("chat %d got two messages %v apart", m.ChatID, m.At.Sub(prev))
		}
		last[m.ChatID] = m.At
	}
	for _, text := range []string{"one", "two"} {
		for _, u := range users {
			if n := textCounts(msgs, text)[u]; n != 1 {
				t.Fatalf("user %d got %q %d times", u, text, n)
			}
		}
	}
}

// A stop in the middle commits progress; the next start finishes the rest and nobody
// gets the message twice. A cancel stops the rest for good.
func TestBroadcastResumesAfterStopAndCancels(t *testing.T) {
	const users = 300
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	dir := t.TempDir()
	cfg := engine.BroadcastConfig{Rate: 100, Batch: 10}
	env := startBroadcastEnv(t, dir, tg, 200, cfg)
	seeUsers(t, env.st, 1, users)
	b, err := env.eng.CreateBroadcast("resume me", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tg.WaitMessages(50, 10*time.Second); !ok {
		t.Fatal("the broadcast did not start")
	}
	env.stop()
	before := len(tg.Messages())
	if before >= users {
		t.Fatalf("the whole broadcast went out before the stop (%d); make it slower", before)
	}

	env = startBroadcastEnv(t, dir, tg, 200, cfg)
	b = waitBroadcast(t, env.eng, b.ID, 30*time.Second)
	msgs := tg.Messages()
	for u, n := range textCounts(msgs, "resume me") {
		if n != 1 {
			t.Fatalf("user %d got the message %d times across a stop", u, n)
		}
	}
	if len(msgs) != users || b.Sent != users || b.State != store.BroadcastDone {
		t.Fatalf("after the restart: %d messages, %+v", len(msgs), b)
	}

	c, err := env.eng.CreateBroadcast("cancel me", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tg.WaitMessages(users+20, 10*time.Second); !ok {
		t.Fatal("the second broadcast did not start")
	}
	if c, err = env.eng.CancelBroadcast(c.ID); err != nil || c.State != store.BroadcastCancelled {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	atCancel := len(tg.Messages())
	if _, err := env.eng.CancelBroadcast(c.ID); err != engine.ErrBroadcastFinished {
		t.Fatalf("second cancel: %v", err)
	}
	// Anything more would have been sent within a few ticks at 100/s.
	time.Sleep(300 * time.Millisecond)
	if after := len(tg.Messages()); after > atCancel+1 {
		t.Fatalf("%d messages were sent after the cancel returned (at most the one in flight may land)", after-atCancel)
	}
	if atCancel-users >= users {
		t.Fatal("the cancelled broadcast reached everybody")
	}
}
