package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// scripted is a provider whose answers the test decides. It records when (on the
// test's clock) each Create happened.
type scripted struct {
	clock *hangartest.Clock
	// fail decides the error of the n-th Create (1-based); nil means success.
	fail func(n int) error
	// gate, when set, blocks each Create until a value arrives or ctx ends.
	gate chan struct{}
	// unwind is how long a Create blocked at the gate takes to return once ctx ends.
	unwind time.Duration

	mu       sync.Mutex
	creates  []time.Time
	labels   map[string]cloud.Instance
	inFlight int
	peak     int
	started  chan string
}

func newScripted(clock *hangartest.Clock) *scripted {
	return &scripted{clock: clock, labels: map[string]cloud.Instance{}, started: make(chan string, 10000)}
}

func (p *scripted) Name() string { return "sim" }

func (p *scripted) Create(ctx context.Context, req cloud.CreateRequest) (cloud.Instance, error) {
	p.mu.Lock()
	p.creates = append(p.creates, p.clock.Now())
	n := len(p.creates)
	p.inFlight++
	p.peak = max(p.peak, p.inFlight)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}()
	p.started <- req.Label
	if p.gate != nil {
		select {
		case <-p.gate:
		case <-ctx.Done():
			time.Sleep(p.unwind)
			return cloud.Instance{}, ctx.Err()
		}
	}
	if p.fail != nil {
		if err := p.fail(n); err != nil {
			return cloud.Instance{}, err
		}
	}
	inst := cloud.Instance{ID: fmt.Sprint(n), Label: req.Label, IPv4: fmt.Sprintf("203.0.113.%d", n%250+1), Status: "running"}
	p.mu.Lock()
	p.labels[req.Label] = inst
	p.mu.Unlock()
	return inst, nil
}

func (p *scripted) FindByLabel(_ context.Context, label string) (cloud.Instance, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst, ok := p.labels[label]
	return inst, ok, nil
}

func (p *scripted) Get(_ context.Context, id string) (cloud.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, inst := range p.labels {
		if inst.ID == id {
			return inst, nil
		}
	}
	return cloud.Instance{}, &cloud.Error{Op: "get", Provider: "sim", Status: 404, Err: errors.New("not found")}
}

func (p *scripted) Delete(context.Context, string) error { return nil }

func (p *scripted) createTimes() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.creates...)
}

var (
	errRetryable = &cloud.Error{Op: "create", Provider: "sim", Status: 503, Retryable: true, Err: errors.New("service unavailable")}
	errPermanent = &cloud.Error{Op: "create", Provider: "sim", Status: 400, Err: errors.New("invalid plan")}
)

func setup(t *testing.T, q engine.QueueConfig, p *scripted) *hangartest.Env {
	t.Helper()
	env := hangartest.Start(t, hangartest.Options{Queue: q, AdminChatID: 999,
		Providers: map[string]engine.Provider{"sim": p}})
	p.clock = env.Clock
	env.Deposit(t, 42, 1_000_000)
	return env
}

func TestRetryBackoffThenDeadLetter(t *testing.T) {
	p := newScripted(nil)
	p.fail = func(int) error { return errRetryable }
	env := setup(t, engine.QueueConfig{}, p) // the seed's defaults: 3 retries at 2 s, 4 s, 8 s
	id := env.Order(t, 42, "sim-nano", "tokyo")

	// Each retry waits on the test's clock: nothing happens until it is moved.
	for i, wait := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
		hangartest.WaitFor(t, 5*time.Second, fmt.Sprintf("retry %d to be scheduled", i+1), func() bool {
			o, _ := env.Store.GetOrder(id)
			return o.Status == store.OrderPending && o.Attempts == i+1
		})
		o, _ := env.Store.GetOrder(id)
		if want := p.createTimes()[i].Add(wait); !o.DueAt.Equal(want) {
			t.Fatalf("retry %d due %v, want %v", i+1, o.DueAt, want)
		}
		env.Clock.Advance(wait - time.Millisecond)
		time.Sleep(30 * time.Millisecond) // several dispatcher ticks: it must not start early
		if n := len(p.createTimes()); n != i+1 {
			t.Fatalf("attempt %d started before its due time", n)
		}
		env.Clock.Advance(time.Millisecond)
	}
	o := env.WaitStatus(t, id, store.OrderFailed, 5*time.Second)
	times := p.createTimes()
	if len(times) != 4 {
		t.Fatalf("%d attempts, want 1 + 3 retries", len(times))
	}
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
		if got := times[i+1].Sub(times[i]); got != want {
			t.Errorf("gap before attempt %d = %v, want %v", i+2, got, want)
		}
	}
	if !o.DeadLettered || o.Money != store.MoneyReleased || !strings.Contains(o.LastError, "503") {
		t.Fatalf("dead letter = %+v", o)
	}
	events := []string{}
	for _, h := range o.History {
		events = append(events, h.Event)
	}
	want := "enqueued started retry_scheduled started retry_scheduled started retry_scheduled started dead_lettered"
	if got := strings.Join(events, " "); got != want {
		t.Fatalf("history = %s\nwant      %s", got, want)
	}
	// The user and the admin chat are told.
	msgs, ok := env.Telegram.WaitMessages(2, 5*time.Second)
	if !ok {
		t.Fatalf("notifications: %+v", msgs)
	}
	chats := map[int64]string{}
	for _, m := range msgs {
		chats[m.ChatID] = m.Text
	}
	if !strings.Contains(chats[42], "failed") || !strings.Contains(chats[999], fmt.Sprintf("order #%d", id)) {
		t.Fatalf("notices = %v", chats)
	}
	if b, _ := env.Store.GetBalance(42); b.Available != 1_000_000 || b.Held != 0 {
		t.Fatalf("balance after a dead letter = %+v, want everything released", b)
	}
}

func TestPermanentErrorIsNotRetried(t *testing.T) {
	p := newScripted(nil)
	p.fail = func(int) error { return errPermanent }
	env := setup(t, engine.QueueConfig{}, p)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	o := env.WaitStatus(t, id, store.OrderFailed, 5*time.Second)
	if o.Attempts != 1 || len(p.createTimes()) != 1 || !o.DeadLettered {
		t.Fatalf("permanent failure took %d attempts: %+v", len(p.createTimes()), o)
	}
}

func TestConcurrencyCap(t *testing.T) {
	p := newScripted(nil)
	p.gate = make(chan struct{})
	env := setup(t, engine.QueueConfig{MaxConcurrency: 3}, p)
	var ids []int64
	for range 9 {
		ids = append(ids, env.Order(t, 42, "sim-nano", "tokyo"))
	}
	for range 3 {
		<-p.started
	}
	stats := queueStats(t, env)
	if stats.InFlight != 3 || stats.Depth != 6 {
		t.Fatalf("stats with 3 blocked = in flight %d, depth %d; want 3 and 6", stats.InFlight, stats.Depth)
	}
	select {
	case l := <-p.started:
		t.Fatalf("a 4th order (%s) started while 3 were in flight", l)
	case <-time.After(50 * time.Millisecond):
	}
	close(p.gate)
	for _, id := range ids {
		env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
	}
	if p.peak != 3 {
		t.Fatalf("peak concurrency %d, want 3", p.peak)
	}
}

// Stop cancels the provider calls in flight, waits until their attempts have
// reported (so none writes to a closed store), and starts no attempt meanwhile: the
// orders still waiting stay pending for the next start.
func TestStopWaitsForAttemptsAndStartsNoMore(t *testing.T) {
	p := newScripted(nil)
	p.gate = make(chan struct{})
	p.unwind = 300 * time.Millisecond
	env := setup(t, engine.QueueConfig{MaxConcurrency: 2}, p)
	var ids []int64
	for range 5 {
		ids = append(ids, env.Order(t, 42, "sim-nano", "tokyo"))
	}
	<-p.started
	<-p.started
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env.Engine.Stop(ctx)

	p.mu.Lock()
	inFlight, creates := p.inFlight, len(p.creates)
	p.mu.Unlock()
	if inFlight != 0 {
		t.Errorf("Stop returned with %d provider calls still running", inFlight)
	}
	if creates != 2 {
		t.Errorf("%d provider calls in all, want the 2 in flight when Stop began", creates)
	}
	counts := map[string]int{}
	for _, id := range ids {
		o, err := env.Store.GetOrder(id)
		if err != nil {
			t.Fatal(err)
		}
		counts[o.Status]++
	}
	if counts[store.OrderProvisioning] != 2 || counts[store.OrderPending] != 3 {
		t.Fatalf("orders after Stop: %v, want 2 provisioning (resumed at the next start) and 3 pending", counts)
	}
}

// startRecorder is the real store, noting how many orders each group commit carried;
// the first refuse commits fail as a full disk would.
type startRecorder struct {
	engine.Store
	mu     sync.Mutex
	sizes  []int
	refuse int
}

var errDiskFull = errors.New("no space left on device")

func (r *startRecorder) UpdateOrders(changes []store.OrderChange) ([]store.OrderResult, error) {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(changes))
	refused := r.refuse > 0
	r.refuse--
	r.mu.Unlock()
	if refused {
		return nil, errDiskFull
	}
	return r.Store.UpdateOrders(changes)
}

// A start commit the store refuses loses nothing and costs no attempt: the orders go
// back on the queue and start once the retry base has passed.
func TestRefusedStartCommitRequeuesTheOrders(t *testing.T) {
	rec := &startRecorder{refuse: 1}
	p := newScripted(nil)
	env := hangartest.Start(t, hangartest.Options{Queue: engine.QueueConfig{MaxConcurrency: 5},
		Providers: map[string]engine.Provider{"sim": p},
		WrapStore: func(s engine.Store) engine.Store { rec.Store = s; return rec }})
	p.clock = env.Clock
	env.Deposit(t, 42, 1_000_000)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	hangartest.WaitFor(t, 5*time.Second, "the refused start commit", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.sizes) >= 1
	})
	time.Sleep(30 * time.Millisecond) // several dispatcher ticks: nothing starts before the retry base
	if o, _ := env.Store.GetOrder(id); o.Status != store.OrderPending || o.Attempts != 0 || len(p.createTimes()) != 0 {
		t.Fatalf("after a refused start: %s with %d attempts and %d provider calls; want pending, 0, 0", o.Status, o.Attempts, len(p.createTimes()))
	}
	if stats := queueStats(t, env); stats.Depth != 1 || stats.InFlight != 0 {
		t.Fatalf("queue after a refused start: depth %d, in flight %d; want the order waiting", stats.Depth, stats.InFlight)
	}
	env.Clock.Advance(2 * time.Second) // the default retry base
	o := env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
	if o.Attempts != 1 || len(p.createTimes()) != 1 {
		t.Fatalf("order active after %d attempts and %d provider calls, want 1 and 1", o.Attempts, len(p.createTimes()))
	}
	if !strings.Contains(env.Logs.String(), errDiskFull.Error()) {
		t.Error("the refused start commit was not logged")
	}
}

// Orders due together start together: one commit moves them all to provisioning
// (the queue's group commit), not one commit per order.
func TestDueOrdersStartInOneCommit(t *testing.T) {
	const orders = 30
	p := newScripted(nil)
	p.gate = make(chan struct{})
	first := setup(t, engine.QueueConfig{MaxConcurrency: 1}, p)
	var ids []int64
	for i := range int64(orders) { // a user each: the per-user order window is small
		first.Deposit(t, 100+i, 1_000_000)
		ids = append(ids, first.Order(t, 100+i, "sim-nano", "tokyo"))
	}
	<-p.started
	first.Stop() // one order caught provisioning, the rest pending

	rec := &startRecorder{}
	next := newScripted(first.Clock) // its create times are not looked at
	env := hangartest.Start(t, hangartest.Options{Dir: first.Dir, Queue: engine.QueueConfig{MaxConcurrency: orders},
		Providers: map[string]engine.Provider{"sim": next},
		WrapStore: func(s engine.Store) engine.Store { rec.Store = s; return rec }})
	for _, id := range ids {
		env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.sizes) == 0 || rec.sizes[0] != orders {
		t.Fatalf("start commits carried %v orders, want all %d recovered orders in the first", rec.sizes, orders)
	}
}

func TestDeadLetterRequeueAndPurge(t *testing.T) {
	p := newScripted(nil)
	var failing atomic.Bool
	failing.Store(true)
	p.fail = func(int) error {
		if failing.Load() {
			return errPermanent
		}
		return nil
	}
	env := setup(t, engine.QueueConfig{}, p)
	var ids []int64
	for range 3 {
		id := env.Order(t, 42, "sim-nano", "tokyo")
		env.WaitStatus(t, id, store.OrderFailed, 5*time.Second)
		ids = append(ids, id)
	}
	var dlq struct {
		DeadLetters []struct {
			OrderID int64 `json:"order_id"`
		} `json:"dead_letters"`
	}
	env.Admin(t, http.MethodGet, "/admin/dlq", nil).JSON(t, &dlq)
	if len(dlq.DeadLetters) != 3 || dlq.DeadLetters[0].OrderID != ids[2] {
		t.Fatalf("dlq = %+v, want 3 newest first", dlq)
	}
	failing.Store(false)
	if r := env.Admin(t, http.MethodPost, fmt.Sprintf("/admin/dlq/%d/requeue", ids[0]), nil); r.Status != 200 {
		t.Fatalf("requeue: %d %s", r.Status, r.Body)
	}
	o := env.WaitStatus(t, ids[0], store.OrderActive, 5*time.Second)
	if o.Attempts != 1 || o.Money != store.MoneyCaptured {
		t.Fatalf("requeued order = %+v, want attempts reset and money captured", o)
	}
	if r := env.Admin(t, http.MethodPost, fmt.Sprintf("/admin/dlq/%d/requeue", ids[0]), nil); r.Status != 409 {
		t.Fatalf("requeue of an active order: %d, want 409", r.Status)
	}
	r := env.Admin(t, http.MethodDelete, "/admin/dlq", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"purged":2`) {
		t.Fatalf("purge: %d %s", r.Status, r.Body)
	}
	for _, id := range ids[1:] {
		if o, _ := env.Store.GetOrder(id); o.Status != store.OrderFailed || o.DeadLettered {
			t.Fatalf("purged order %d = %s dead=%v; want failed and off the list", id, o.Status, o.DeadLettered)
		}
	}
	env.Admin(t, http.MethodGet, "/admin/dlq", nil).JSON(t, &dlq)
	if len(dlq.DeadLetters) != 0 {
		t.Fatalf("dlq after purge = %+v", dlq)
	}
	// Requeue-all on an empty list is a no-op; after a new failure it takes it.
	failing.Store(true)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderFailed, 5*time.Second)
	failing.Store(false)
	if r := env.Admin(t, http.MethodPost, "/admin/dlq/requeue", nil); !strings.Contains(string(r.Body), `"requeued":1`) {
		t.Fatalf("requeue all: %s", r.Body)
	}
	env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
}

func TestCancel(t *testing.T) {
	p := newScripted(nil)
	p.gate = make(chan struct{})
	env := setup(t, engine.QueueConfig{MaxConcurrency: 1}, p)
	busy := env.Order(t, 42, "sim-nano", "tokyo")
	<-p.started
	waiting := env.Order(t, 42, "sim-nano", "tokyo")
	about := func() int { // messages to the user naming the waiting order
		n := 0
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == 42 && strings.Contains(m.Text, fmt.Sprintf("#%d", waiting)) {
				n++
			}
		}
		return n
	}
	before := about() // an order taken over the API is not announced in the chat

	tests := []struct {
		name   string
		id     int64
		status int
	}{
		{"pending order", waiting, 200},
		{"already cancelled", waiting, 409},
		{"order being provisioned", busy, 409},
		{"unknown order", 987654, 404},
	}
	for _, tt := range tests {
		r := env.Admin(t, http.MethodPost, fmt.Sprintf("/admin/orders/%d/cancel", tt.id), nil)
		if r.Status != tt.status {
			t.Fatalf("%s: %d %s, want %d", tt.name, r.Status, r.Body, tt.status)
		}
	}
	o, _ := env.Store.GetOrder(waiting)
	if o.Status != store.OrderCancelled || o.Money != store.MoneyReleased {
		t.Fatalf("cancelled order = %+v", o)
	}
	// The user hears of it at once, not at the outbox's next rescan 30 s later.
	hangartest.WaitFor(t, 5*time.Second, "the cancellation message", func() bool { return about() > before })
	close(p.gate)
	env.WaitStatus(t, busy, store.OrderActive, 5*time.Second)
	time.Sleep(30 * time.Millisecond)
	if n := len(p.createTimes()); n != 1 {
		t.Fatalf("the cancelled order was provisioned (%d creates)", n)
	}
	b, _ := env.Store.GetBalance(42)
	if b.Available != 1_000_000-5000 || b.Held != 0 {
		t.Fatalf("balance = %+v, want one captured price", b)
	}
}

func TestPanickingProviderCannotTakeTheEngineDown(t *testing.T) {
	p := newScripted(nil)
	var panicking atomic.Bool
	panicking.Store(true)
	p.fail = func(int) error {
		if panicking.Load() {
			panic("provider bug")
		}
		return nil
	}
	env := setup(t, engine.QueueConfig{Retry: engine.RetryPolicy{Base: time.Millisecond}}, p)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	var o store.Order
	hangartest.WaitFor(t, 10*time.Second, "the panicking order to be dead-lettered", func() bool {
		env.Clock.Advance(time.Second) // let every retry come due
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderFailed
	})
	if o.Attempts != 4 || !strings.Contains(o.LastError, "internal error") {
		t.Fatalf("after panics: attempts %d, last error %q", o.Attempts, o.LastError)
	}
	if r := hangartest.Do(t, http.MethodGet, env.URL+"/health", nil); r.Status != 200 {
		t.Fatalf("health after panics: %d %s", r.Status, r.Body)
	}
	panicking.Store(false)
	env.WaitStatus(t, env.Order(t, 42, "sim-nano", "tokyo"), store.OrderActive, 5*time.Second)
}

func queueStats(t *testing.T, env *hangartest.Env) engine.QueueStats {
	t.Helper()
	var s engine.QueueStats
	env.Admin(t, http.MethodGet, "/admin/queue", nil).JSON(t, &s)
	return s
}
