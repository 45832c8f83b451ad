package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/telegram"
	hangarhttp "github.com/hangarhq/hangar/http"
	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

func TestWebhookRefusesBadRequests(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{MaxBody: 4096})
	valid := hangartest.Update(1, 100, "/help")
	tests := []struct {
		name    string
		body    []byte
		headers []string
		status  int
		code    string
	}{
		{"missing secret", valid, nil, 401, "unauthorized"},
		{"wrong secret", valid, []string{"X-Telegram-Bot-Api-Secret-Token", "nope"}, 401, "unauthorized"},
		{"secret with a prefix of the right one", valid, []string{"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret[:5]}, 401, "unauthorized"},
		{"oversized body", append(valid[:len(valid)-1], []byte(`,"pad":"`+strings.Repeat("x", 5000)+`"}`)...), []string{"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret}, 413, "body_too_large"},
		{"malformed JSON", []byte(`{"update_id": 1,`), []string{"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret}, 400, "malformed_json"},
		{"not an object", []byte(`[1,2]`), []string{"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret}, 400, "malformed_json"},
		{"missing update_id", []byte(`{"message":{"text":"hi"}}`), []string{"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret}, 400, "missing_update_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hangartest.Do(t, http.MethodPost, env.URL+"/webhook", tt.body, tt.headers...)
			if r.Status != tt.status {
				t.Fatalf("status = %d, want %d (%s)", r.Status, tt.status, r.Body)
			}
			var e struct{ Error, Code string }
			r.JSON(t, &e)
			if e.Code != tt.code || e.Error == "" {
				t.Fatalf("error body = %s, want code %q and a sentence", r.Body, tt.code)
			}
		})
	}
	// Nothing refused may have been stored or answered.
	if n, _ := env.Store.InboxDepth(); n != 0 {
		t.Fatalf("inbox holds %d updates after refused requests", n)
	}
	if got := env.Metric(t, "hangar_updates_accepted_total"); got != 0 {
		t.Fatalf("accepted %v updates, want 0", got)
	}
	if env.Telegram.Calls() != 0 {
		t.Fatalf("telegram was called %d times", env.Telegram.Calls())
	}
}

func TestWebhookAnswersAndIgnoresRedeliveries(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	first := env.PostUpdate(t, hangartest.Update(7, 100, "/start"))
	again := env.PostUpdate(t, hangartest.Update(7, 100, "/start"))
	if first.Status != 200 || again.Status != 200 {
		t.Fatalf("statuses %d, %d; want 200 for both (Telegram must not retry)", first.Status, again.Status)
	}
	if !bytes.Contains(again.Body, []byte(`"duplicate":true`)) {
		t.Fatalf("re-delivery not flagged: %s", again.Body)
	}
	env.Settle(t)
	msgs := env.Telegram.Messages()
	if len(msgs) != 1 {
		t.Fatalf("got %d replies, want exactly 1: %+v", len(msgs), msgs)
	}
	if msgs[0].ChatID != 100 || !strings.Contains(msgs[0].Text, "Hello, Ada") || msgs[0].ParseMode != "HTML" {
		t.Fatalf("unexpected reply %+v", msgs[0])
	}
	if got := env.Metric(t, "hangar_updates_duplicate_total"); got != 1 {
		t.Fatalf("duplicates = %v, want 1", got)
	}
}

func TestWebhookRateLimitWindow(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 30, RateWindow: time.Minute})
	const user = 4242
	id := int64(0)
	send := func(n int) {
		for range n {
			id++
			if r := env.PostUpdate(t, hangartest.Update(id, user, "/help")); r.Status != 200 {
				t.Fatalf("update %d: status %d %s", id, r.Status, r.Body)
			}
		}
	}
	send(32) // 30 pass, the 31st earns one "slow down", the 32nd is silently dropped
	env.Settle(t)
	msgs := env.Telegram.Messages()
	if len(msgs) != 31 {
		t.Fatalf("got %d replies, want 30 answers + 1 slow-down", len(msgs))
	}
	if !strings.Contains(msgs[30].Text, "too fast") {
		t.Fatalf("31st reply is %q, want the slow-down notice", msgs[30].Text)
	}
	if got := env.Metric(t, "hangar_ratelimited_total"); got != 2 {
		t.Fatalf("ratelimited = %v, want 2", got)
	}
	w, err := env.Store.LoadWindow(user)
	if err != nil || w.Count != 30 || !w.Warned {
		t.Fatalf("stored window = %+v, %v; want count 30, warned", w, err)
	}

	// Inside the window still refused; once the window has passed, a new one starts.
	env.Clock.Advance(59 * time.Second)
	send(1)
	env.Settle(t)
	if n := len(env.Telegram.Messages()); n != 31 {
		t.Fatalf("a message inside the full window was answered (%d replies)", n)
	}
	env.Clock.Advance(2 * time.Second)
	send(1)
	env.Settle(t)
	if n := len(env.Telegram.Messages()); n != 32 {
		t.Fatalf("after the window expired: %d replies, want 32", n)
	}
	if w, _ := env.Store.LoadWindow(user); w.Count != 1 || w.Warned {
		t.Fatalf("new window = %+v, want count 1", w)
	}
}

func TestWebhookUsersHaveSeparateWindows(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 2})
	for i, user := range []int64{1, 2, 1, 2, 1, 2} {
		env.PostUpdate(t, hangartest.Update(int64(i+1), user, "/help"))
	}
	env.Settle(t)
	perChat := map[int64]int{}
	for _, m := range env.Telegram.Messages() {
		perChat[m.ChatID]++
	}
	if perChat[1] != 3 || perChat[2] != 3 { // 2 answers + 1 slow-down each
		t.Fatalf("replies per chat = %v, want 3 each", perChat)
	}
}

// failingStore makes every rate-limit read and write fail, as a broken disk would.
type failingStore struct {
	engine.Store
	failures atomic.Int64
}

var errDisk = errors.New("disk on fire")

func (f *failingStore) LoadWindow(int64) (store.Window, error) {
	f.failures.Add(1)
	return store.Window{}, errDisk
}

func (f *failingStore) CompleteUpdate(store.UpdateOutcome) ([]store.OutboxMessage, error) {
	f.failures.Add(1)
	return nil, errDisk
}

func (f *failingStore) UpdateSeen(int64) (bool, error) {
	f.failures.Add(1)
	return false, errDisk
}

func (f *failingStore) ProcessUpdate(store.UpdateOutcome) ([]store.OutboxMessage, error) {
	f.failures.Add(1)
	return nil, errDisk
}

// A store that cannot commit: the user is still answered (availability first), but
// the webhook must not answer 200 for an update it did not keep, so Telegram delivers
// it again.
func TestWebhookStoreFailureAnswersTheUserAnd503(t *testing.T) {
	fs := &failingStore{}
	env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store {
		fs.Store = s
		return fs
	}})
	for i := int64(1); i <= 3; i++ {
		r := env.PostUpdate(t, hangartest.Update(i, 77, "/help"))
		var e errBody
		r.JSON(t, &e)
		if r.Status != 503 || e.Code != "store_unavailable" {
			t.Fatalf("update %d while the store fails: %d %s, want 503 store_unavailable", i, r.Status, r.Body)
		}
	}
	// The user is answered although the limiter cannot read or write its window.
	if _, ok := env.Telegram.WaitMessages(3, 10*time.Second); !ok {
		t.Fatalf("only %d replies while the store failed; the limiter must fail open", len(env.Telegram.Messages()))
	}
	if got := env.Metric(t, "hangar_ratelimit_store_errors_total"); got < 3 {
		t.Fatalf("store errors counted = %v, want >= 3", got)
	}
	if !strings.Contains(env.Logs.String(), "letting the message pass") {
		t.Fatal("store failure was not logged")
	}
	if got := env.Metric(t, "hangar_updates_accepted_total"); got != 0 {
		t.Fatalf("accepted = %v while nothing could be stored", got)
	}
}

// flakyStore fails the next commits of webhook updates with err.
type flakyStore struct {
	engine.Store
	fail atomic.Int64
	err  error
}

func (f *flakyStore) ProcessUpdate(o store.UpdateOutcome) ([]store.OutboxMessage, error) {
	if f.fail.Add(-1) >= 0 {
		return nil, f.err
	}
	return f.Store.ProcessUpdate(o)
}

// An update whose one commit failed is answered with the store error's status, its
// reply still goes out, and Telegram's re-delivery is processed (not taken for a
// duplicate): nothing of the failed commit was kept, not even the seen-marker.
func TestWebhookCommitFailureIsProcessedAgainOnRedelivery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
	}{
		{"failing log", store.ErrLogUnavailable, 503, "store_unavailable"},
		{"full disk", store.ErrInsufficientStorage, 507, "insufficient_storage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := &flakyStore{err: tc.err}
			fs.fail.Store(1)
			env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store {
				fs.Store = s
				return fs
			}})
			r := env.PostUpdate(t, hangartest.Update(1, 78, "/help"))
			var e errBody
			r.JSON(t, &e)
			if r.Status != tc.status || e.Code != tc.code {
				t.Fatalf("failed commit answered %d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
			if _, ok := env.Telegram.WaitMessages(1, 10*time.Second); !ok {
				t.Fatal("the user was not answered while the commit failed")
			}
			if seen, err := env.Store.UpdateSeen(1); err != nil || seen {
				t.Fatalf("seen-marker after the failed commit: %v, %v", seen, err)
			}
			again := env.PostUpdate(t, hangartest.Update(1, 78, "/help"))
			if again.Status != 200 || bytes.Contains(again.Body, []byte("duplicate")) {
				t.Fatalf("re-delivery after the failed commit: %d %s, want 200 and processed", again.Status, again.Body)
			}
			env.Settle(t)
			if n := len(env.Telegram.Messages()); n != 2 {
				t.Fatalf("%d replies, want 2 (one per try)", n)
			}
			if seen, _ := env.Store.UpdateSeen(1); !seen {
				t.Fatal("no seen-marker after the re-delivery's commit")
			}
		})
	}
}

// The same update_id posted many times at once (Telegram retrying a slow answer) is
// processed once: one answer says fresh, the others duplicate, one reply, one count.
func TestWebhookConcurrentSameUpdateProcessedOnce(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	const n = 8
	var wg sync.WaitGroup
	bodies := make([][]byte, n)
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.PostUpdate(t, hangartest.Update(5, 79, "/help"))
			statuses[i], bodies[i] = r.Status, r.Body
		}()
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if statuses[i] != 200 {
			t.Fatalf("answer %d: %d %s", i, statuses[i], bodies[i])
		}
		if !bytes.Contains(bodies[i], []byte(`"duplicate":true`)) {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d answers said processed, want exactly 1", fresh)
	}
	env.Settle(t)
	if msgs := env.Telegram.Messages(); len(msgs) != 1 {
		t.Fatalf("%d replies, want 1", len(msgs))
	}
	if w, err := env.Store.LoadWindow(79); err != nil || w.Count != 1 {
		t.Fatalf("window = %+v, %v; want count 1", w, err)
	}
	if got := env.Metric(t, "hangar_updates_duplicate_total"); got != n-1 {
		t.Fatalf("duplicates = %v, want %d", got, n-1)
	}
}

func TestWebhookHonoursTelegram429(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Telegram.Throttle(1, 1)
	env.PostUpdate(t, hangartest.Update(1, 5, "/help"))
	// The throttled message waits in the outbox until retry_after, with no attempt
	// counted (a 429 is about the rate, not the message), and nothing is sent before it
	// passes (the fake clock stands still).
	hangartest.WaitFor(t, 10*time.Second, "the throttled message to be rescheduled", func() bool {
		q, _ := env.Store.QueuedMessages(10)
		return len(q) == 1 && q[0].Attempts == 0 && q[0].LastError != "" && q[0].NextAt.After(env.Clock.Now())
	})
	if env.Telegram.Calls() != 1 {
		t.Fatalf("calls = %d before retry_after passed, want 1", env.Telegram.Calls())
	}
	env.Clock.Advance(1100 * time.Millisecond)
	msgs, ok := env.Telegram.WaitMessages(1, 10*time.Second)
	if !ok {
		t.Fatal("message never delivered after a 429")
	}
	if env.Telegram.Calls() != 2 {
		t.Fatalf("calls = %d, want one 429 then one success", env.Telegram.Calls())
	}
	if len(msgs) != 1 {
		t.Fatalf("delivered %d times", len(msgs))
	}
}

func TestHealthAndMetrics(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	if r := hangartest.Do(t, http.MethodGet, env.URL+"/health", nil); r.Status != 200 || string(r.Body) != `{"status":"ok"}` {
		t.Fatalf("public health = %d %s, want 200 and the status alone", r.Status, r.Body)
	}
	r := env.Admin(t, http.MethodGet, "/admin/health", nil)
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"store":"ok"`)) || !bytes.Contains(r.Body, []byte(`"running":true`)) {
		t.Fatalf("detailed health = %d %s", r.Status, r.Body)
	}
	m := hangartest.Do(t, http.MethodGet, env.URL+"/metrics", nil)
	for _, name := range []string{"hangar_http_requests_total", "hangar_updates_accepted_total", "hangar_ratelimit_store_errors_total", "hangar_http_request_seconds_bucket"} {
		if !bytes.Contains(m.Body, []byte(name)) {
			t.Errorf("metrics lack %s", name)
		}
	}
	if bytes.Contains(m.Body, []byte(hangartest.BotToken)) || bytes.Contains(m.Body, []byte(hangartest.WebhookSecret)) {
		t.Fatal("a secret leaked into /metrics")
	}
}

func TestAdminResetRateLimit(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 1})
	env.PostUpdate(t, hangartest.Update(1, 9, "/help"))
	env.PostUpdate(t, hangartest.Update(2, 9, "/help")) // refused: slow down
	env.Settle(t)
	cases := []struct {
		name   string
		auth   []string
		status int
	}{
		{"no bearer", nil, 401},
		{"wrong token", []string{"Authorization", "Bearer wrong"}, 403},
		{"right token", []string{"Authorization", "Bearer " + hangartest.AdminToken}, 200},
	}
	for _, c := range cases {
		r := hangartest.Do(t, http.MethodDelete, env.URL+"/admin/ratelimit/9", nil, c.auth...)
		if r.Status != c.status {
			t.Fatalf("%s: status %d, want %d (%s)", c.name, r.Status, c.status, r.Body)
		}
	}
	env.PostUpdate(t, hangartest.Update(3, 9, "/help"))
	env.Settle(t)
	if n := len(env.Telegram.Messages()); n != 3 {
		t.Fatalf("after reset: %d replies, want 3 (answer, slow-down, answer)", n)
	}
	if r := env.Admin(t, http.MethodDelete, "/admin/ratelimit/abc", nil); r.Status != 400 {
		t.Fatalf("bad user id: %d", r.Status)
	}
}

func TestIdleUserActorStopsAndItsWindowSurvives(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{RateLimit: 5, IdleTimeout: 100 * time.Millisecond})
	for i := int64(1); i <= 3; i++ {
		env.PostUpdate(t, hangartest.Update(i, 21, "/help"))
	}
	env.Settle(t)
	actors := func() int {
		var h struct {
			Engine struct {
				UserActors int `json:"user_actors"`
			} `json:"engine"`
		}
		env.Admin(t, http.MethodGet, "/admin/health", nil).JSON(t, &h)
		return h.Engine.UserActors
	}
	if n := actors(); n != 1 {
		t.Fatalf("user actors = %d, want 1", n)
	}
	env.Clock.Advance(time.Second) // idle for longer than IdleTimeout (the window is 60 s)
	hangartest.WaitFor(t, 5*time.Second, "the idle actor to stop", func() bool { return actors() == 0 })
	// A new actor picks the window up from the store: 2 more pass, the next is refused.
	for i := int64(4); i <= 6; i++ {
		env.PostUpdate(t, hangartest.Update(i, 21, "/help"))
	}
	env.Settle(t)
	if w, _ := env.Store.LoadWindow(21); w.Count != 5 || !w.Warned {
		t.Fatalf("window after restart of the actor = %+v, want count 5 and warned", w)
	}
}

// A re-delivery is answered as a duplicate, and a fresh update is not, also after a
// restart, when the store's filter of seen update_ids is loaded from the markers
// stored (store's TestSeenMarkersAreReadOnlyForPossibleRepeats counts the reads).
func TestWebhookDuplicatesFoundAcrossARestart(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	for id := int64(1); id <= 3; id++ {
		if r := env.PostUpdate(t, hangartest.Update(id, 90, "/help")); r.Status != 200 || bytes.Contains(r.Body, []byte("duplicate")) {
			t.Fatalf("update %d: %d %s", id, r.Status, r.Body)
		}
	}
	if r := env.PostUpdate(t, hangartest.Update(2, 90, "/help")); !bytes.Contains(r.Body, []byte(`"duplicate":true`)) {
		t.Fatalf("re-delivery: %d %s", r.Status, r.Body)
	}
	env.Settle(t)
	env.Stop()

	env = hangartest.Start(t, hangartest.Options{Dir: env.Dir})
	if r := env.PostUpdate(t, hangartest.Update(3, 90, "/help")); !bytes.Contains(r.Body, []byte(`"duplicate":true`)) {
		t.Fatalf("re-delivery after a restart: %d %s", r.Status, r.Body)
	}
	if r := env.PostUpdate(t, hangartest.Update(4, 90, "/help")); r.Status != 200 || bytes.Contains(r.Body, []byte("duplicate")) {
		t.Fatalf("a fresh update after a restart: %d %s", r.Status, r.Body)
	}
	env.Settle(t)
	if n := len(env.Telegram.Messages()); n != 1 {
		t.Fatalf("%d replies after the restart, want 1", n)
	}
}

// stallingStore holds every webhook update's commit until released, as an
// overloaded disk would.
type stallingStore struct {
	engine.Store
	release chan struct{}
	stalled atomic.Int64
}

func (s *stallingStore) ProcessUpdate(o store.UpdateOutcome) ([]store.OutboxMessage, error) {
	s.stalled.Add(1)
	<-s.release
	return s.Store.ProcessUpdate(o)
}

// postAll posts each body on its own goroutine; the answers arrive on the channel.
func postAll(t *testing.T, env *hangartest.Env, bodies ...[]byte) <-chan hangartest.Response {
	out := make(chan hangartest.Response, len(bodies))
	for _, b := range bodies {
		go func() { out <- env.PostUpdate(t, b) }()
	}
	return out
}

func waitPending(t *testing.T, env *hangartest.Env, n int) {
	t.Helper()
	hangartest.WaitFor(t, 10*time.Second, fmt.Sprintf("%d updates waiting for their actors", n), func() bool {
		h, err := env.Engine.Health(context.Background())
		return err == nil && h.Inbox == n
	})
}

func TestWebhookPushesBackWhenProcessingFallsBehind(t *testing.T) {
	ss := &stallingStore{release: make(chan struct{})}
	env := hangartest.Start(t, hangartest.Options{MaxPending: 3, WrapStore: func(s engine.Store) engine.Store {
		ss.Store = s
		return ss
	}})
	answers := postAll(t, env, hangartest.Update(1, 1, "/help"), hangartest.Update(2, 2, "/help"), hangartest.Update(3, 3, "/help"))
	waitPending(t, env, 3)
	r := env.PostUpdate(t, hangartest.Update(4, 4, "/help"))
	var e errBody
	r.JSON(t, &e)
	if r.Status != 503 || e.Code != "busy" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("4th update while 3 handlers wait: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if seen, _ := env.Store.UpdateSeen(4); seen {
		t.Fatal("the refused update was recorded")
	}
	close(ss.release)
	for range 3 {
		if a := <-answers; a.Status != 200 {
			t.Fatalf("a waiting handler was answered %d %s", a.Status, a.Body)
		}
	}
	// Telegram's re-delivery is accepted once the backlog is gone.
	if r := env.PostUpdate(t, hangartest.Update(4, 4, "/help")); r.Status != 200 || bytes.Contains(r.Body, []byte("duplicate")) {
		t.Fatalf("re-delivery of the refused update: %d %s", r.Status, r.Body)
	}
	if _, ok := env.Telegram.WaitMessages(4, 5*time.Second); !ok {
		t.Fatalf("got %d replies, want 4", len(env.Telegram.Messages()))
	}
}

// Stop with handlers waiting on stuck actors answers every one of them (503), instead
// of leaving Telegram's requests hanging.
func TestWebhookStopAnswersWaitingHandlers(t *testing.T) {
	ss := &stallingStore{release: make(chan struct{})}
	env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store {
		ss.Store = s
		return ss
	}})
	// Two users' commits stuck, and a third update queued behind the first user's.
	answers := postAll(t, env, hangartest.Update(1, 1, "/help"), hangartest.Update(2, 2, "/help"))
	hangartest.WaitFor(t, 10*time.Second, "two commits stuck", func() bool { return ss.stalled.Load() == 2 })
	queued := postAll(t, env, hangartest.Update(3, 1, "/help"))
	waitPending(t, env, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	env.Engine.Stop(ctx)
	for _, ch := range []<-chan hangartest.Response{answers, answers, queued} {
		a := <-ch
		var e errBody
		a.JSON(t, &e)
		if a.Status != 503 || e.Code != "starting" {
			t.Fatalf("a handler waiting at Stop was answered %d %s, want 503 starting", a.Status, a.Body)
		}
	}
	if r := env.PostUpdate(t, hangartest.Update(4, 4, "/help")); r.Status != 503 {
		t.Fatalf("an update after Stop: %d %s", r.Status, r.Body)
	}
	// The stuck actors finish once the disk answers (Telegram's re-deliveries will be
	// duplicates); the store closes only after them.
	close(ss.release)
	hangartest.WaitFor(t, 10*time.Second, "the stuck updates to be committed", func() bool {
		for id := int64(1); id <= 3; id++ {
			if seen, _ := env.Store.UpdateSeen(id); !seen {
				return false
			}
		}
		return true
	})
}

// panickyStore panics the first time the bot reads a balance, as a bug in the bot
// would.
type panickyStore struct {
	engine.Store
	panicked atomic.Bool
}

func (s *panickyStore) GetBalance(user int64) (store.Balance, error) {
	if s.panicked.CompareAndSwap(false, true) {
		panic("bug while answering /balance")
	}
	return s.Store.GetBalance(user)
}

// A panic in the bot answers the waiting handler (500, so Telegram delivers it again),
// leaves the daemon up and the window as it was, and the re-delivery is processed.
func TestWebhookBotPanicAnswers500AndTheRedeliveryIsProcessed(t *testing.T) {
	ps := &panickyStore{}
	env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store {
		ps.Store = s
		return ps
	}})
	r := env.PostUpdate(t, hangartest.Update(1, 31, "/balance"))
	var e errBody
	r.JSON(t, &e)
	if r.Status != 500 || e.Code != "internal" {
		t.Fatalf("update whose processing panicked: %d %s, want 500", r.Status, r.Body)
	}
	if h := hangartest.Do(t, http.MethodGet, env.URL+"/health", nil); h.Status != 200 {
		t.Fatalf("health after a panic: %d", h.Status)
	}
	m := hangartest.Do(t, http.MethodGet, env.URL+"/metrics", nil)
	if !bytes.Contains(m.Body, []byte(`hangar_actor_panics_total{kind="user"} 1`)) {
		t.Fatal("the panic was not counted in hangar_actor_panics_total")
	}
	if r := env.PostUpdate(t, hangartest.Update(1, 31, "/balance")); r.Status != 200 || bytes.Contains(r.Body, []byte("duplicate")) {
		t.Fatalf("re-delivery after the panic: %d %s, want 200 and processed", r.Status, r.Body)
	}
	env.Settle(t)
	if msgs := env.Telegram.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Balance") {
		t.Fatalf("replies %+v, want the balance once", msgs)
	}
	if w, err := env.Store.LoadWindow(31); err != nil || w.Count != 1 {
		t.Fatalf("window = %+v, %v; want the update counted once", w, err)
	}
}

// Past Config.UpdateWait the handler answers 503 (Telegram delivers again); the actor
// still finishes the update, so the re-delivery is a duplicate and nothing is done
// twice.
func TestWebhookWaitIsBounded(t *testing.T) {
	ss := &stallingStore{release: make(chan struct{})}
	st, err := store.Open(store.Options{Dir: t.TempDir(), SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	sender, err := telegram.New(hangartest.BotToken, tg.URL())
	if err != nil {
		t.Fatal(err)
	}
	ss.Store = st
	eng, err := engine.New(engine.Config{UpdateWait: 50 * time.Millisecond, Language: "en", Registry: prometheus.NewRegistry()}, ss, sender)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	srv := hangarhttp.New(hangarhttp.Config{WebhookSecret: hangartest.WebhookSecret, Registry: prometheus.NewRegistry()},
		hangarhttp.Deps{Updates: eng, Health: eng, Store: st})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		eng.Stop(ctx)
		_ = st.Close()
	}()
	post := func() hangartest.Response {
		return hangartest.Do(t, http.MethodPost, "http://"+ln.Addr().String()+"/webhook", hangartest.Update(1, 51, "/help"),
			"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret)
	}
	r := post()
	var e errBody
	r.JSON(t, &e)
	if r.Status != 503 || e.Code != "busy" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("an update stuck past the wait: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	close(ss.release)
	hangartest.WaitFor(t, 10*time.Second, "the stuck update to be committed", func() bool {
		seen, _ := st.UpdateSeen(1)
		return seen
	})
	if r := post(); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"duplicate":true`)) {
		t.Fatalf("re-delivery of an update finished after its handler gave up: %d %s, want a duplicate", r.Status, r.Body)
	}
	if _, ok := tg.WaitMessages(1, 10*time.Second); !ok || len(tg.Messages()) != 1 {
		t.Fatalf("%d replies, want 1", len(tg.Messages()))
	}
}

// A reply that could not be stored (the store failing) is kept in memory and retried
// with backoff; it gives up after its attempts rather than blocking the sender forever.
func TestUnstoredReplyGivesUpAfterItsAttempts(t *testing.T) {
	fs := &failingStore{}
	env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store {
		fs.Store = s
		return fs
	}})
	env.Telegram.SetDown(true)
	env.PostUpdate(t, hangartest.Update(1, 41, "/help"))
	hangartest.WaitFor(t, 15*time.Second, "the unsendable reply to be dropped", func() bool {
		env.Clock.Advance(5 * time.Minute) // the longest backoff: every retry comes due
		recent, _ := env.Store.RecentMessages(10)
		return len(recent) == 1 && recent[0].Status == store.MessageDropped
	})
	env.Telegram.SetDown(false)
	env.PostUpdate(t, hangartest.Update(2, 41, "/help"))
	if _, ok := env.Telegram.WaitMessages(1, 10*time.Second); !ok {
		t.Fatal("the sender stayed stuck on the dropped reply")
	}
}
