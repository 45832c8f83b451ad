package engine_test

import (
	"errors"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// completionRecorder sees every order commit and counts, per commit, the orders it
// made active. The first commit that completes anything sends its orders' ids to
// holding and waits for hold to close; refuse, when set, fails the commits it names.
type completionRecorder struct {
	engine.Store
	hold    chan struct{}
	holding chan []int64
	refuse  func(changes []store.OrderChange) error

	mu     sync.Mutex
	active []int
	held   bool
}

func newCompletionRecorder() *completionRecorder {
	return &completionRecorder{hold: make(chan struct{}), holding: make(chan []int64, 1)}
}

// completes reports a completion commit: the completer's changes carry the user's
// message, starts carry none (the scripted provider leaves the password to hangar, so
// the message is stored).
func completes(changes []store.OrderChange) bool {
	for _, c := range changes {
		if len(c.Notes) > 0 {
			return true
		}
	}
	return false
}

func (r *completionRecorder) UpdateOrders(changes []store.OrderChange) ([]store.OrderResult, error) {
	if completes(changes) {
		r.mu.Lock()
		first := !r.held
		r.held = true
		r.mu.Unlock()
		if first {
			ids := make([]int64, len(changes))
			for i, c := range changes {
				ids[i] = c.ID
			}
			r.holding <- ids
			<-r.hold
		}
	}
	if r.refuse != nil {
		if err := r.refuse(changes); err != nil {
			return nil, err
		}
	}
	res, err := r.Store.UpdateOrders(changes)
	if err != nil {
		return res, err
	}
	n := 0
	for _, x := range res {
		if x.Err == nil && x.Order.Status == store.OrderActive {
			n++
		}
	}
	if n > 0 {
		r.mu.Lock()
		r.active = append(r.active, n)
		r.mu.Unlock()
	}
	return res, err
}

func (r *completionRecorder) commits() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.active...)
}

// completeInTwo lets one create return and its completion commit begin, which holds
// the completer; then every other create returns and its order reaches the completer
// before that commit ends. It returns the ids of the first commit.
// startGatedOrders starts a stack whose store is rec and whose provider holds every
// create at its gate, and places orders orders from as many funded users.
func startGatedOrders(t *testing.T, rec *completionRecorder, orders int) (*hangartest.Env, *scripted, []int64) {
	t.Helper()
	p := newScripted(nil)
	p.gate = make(chan struct{})
	env := hangartest.Start(t, hangartest.Options{Queue: engine.QueueConfig{MaxConcurrency: orders},
		Providers: map[string]engine.Provider{"sim": p},
		WrapStore: func(s engine.Store) engine.Store { rec.Store = s; return rec }})
	p.clock = env.Clock
	var ids []int64
	for i := range int64(orders) {
		env.Deposit(t, 100+i, 1_000_000)
		ids = append(ids, env.Order(t, 100+i, "sim-nano", "tokyo"))
	}
	return env, p, ids
}

func completeInTwo(t *testing.T, p *scripted, rec *completionRecorder, orders int, between func(first []int64)) {
	t.Helper()
	for range orders {
		<-p.started
	}
	p.gate <- struct{}{}
	first := <-rec.holding
	if between != nil {
		between(first)
	}
	close(p.gate)
	hangartest.WaitFor(t, 5*time.Second, "every create to return", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inFlight == 0
	})
	time.Sleep(50 * time.Millisecond) // the order actors hand their servers over
	close(rec.hold)
}

// Servers that become ready while a completion commit is in progress are recorded
// together in the next one, each order with its capture and message.
func TestCompletionsShareOneCommit(t *testing.T) {
	const orders = 12
	rec := newCompletionRecorder()
	env, p, ids := startGatedOrders(t, rec, orders)
	completeInTwo(t, p, rec, orders, nil)
	for _, id := range ids {
		env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
	}
	// The recorder counts a commit once the store returned, which may be after the
	// orders read active.
	hangartest.WaitFor(t, 5*time.Second, "the completion commits to be recorded", func() bool {
		n := 0
		for _, c := range rec.commits() {
			n += c
		}
		return n >= orders
	})
	if got := rec.commits(); len(got) != 2 || got[0] != 1 || got[1] != orders-1 {
		t.Fatalf("completion commits made %v orders active, want [1 %d]: the first alone, the rest together", got, orders-1)
	}
	env.Settle(t)
	for i, id := range ids {
		assertCapturedOnce(t, env, 100+int64(i), id)
	}
	if st := queueStats(t, env); st.Succeeded != orders || st.InFlight != 0 {
		t.Fatalf("queue after the completions: %d succeeded, %d in flight; want %d and 0", st.Succeeded, st.InFlight, orders)
	}
	for _, id := range ids {
		o, _ := env.Store.GetOrder(id)
		ip := regexp.MustCompile(regexp.QuoteMeta(o.IPAddress) + `(\D|$)`) // the order's own
		readyMessages := func() int {
			n := 0
			for _, m := range env.Telegram.Messages() {
				if ip.MatchString(m.Text) {
					n++
				}
			}
			return n
		}
		hangartest.WaitFor(t, 5*time.Second, "the ready message", func() bool { return readyMessages() > 0 })
		if n := readyMessages(); n != 1 {
			t.Errorf("order %d: %d ready messages, want 1", id, n)
		}
	}
}

// A completion commit that fails because of one order (its money or indexes) fails
// only that order: the others are recorded one by one, and the failed one is retried,
// finds its server by label and is captured once.
func TestOneBadCompletionDoesNotFailTheBatch(t *testing.T) {
	const orders = 8
	rec := newCompletionRecorder()
	var mu sync.Mutex
	var bad int64
	refusals := 0
	errLedger := errors.New("ledger: corrupt balance record")
	rec.refuse = func(changes []store.OrderChange) error {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range changes {
			if c.ID == bad && len(c.Notes) > 0 {
				refusals++
				return errLedger
			}
		}
		return nil
	}
	env, p, ids := startGatedOrders(t, rec, orders)
	completeInTwo(t, p, rec, orders, func(first []int64) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids { // one of the batch the first commit holds back
			if !slices.Contains(first, id) {
				bad = id
			}
		}
	})
	for _, id := range ids {
		if id != bad {
			env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
		}
	}
	hangartest.WaitFor(t, 5*time.Second, "the bad order's retry", func() bool {
		return queueStats(t, env).Retried == 1
	})
	if o, _ := env.Store.GetOrder(bad); o.Status != store.OrderProvisioning || o.Money != store.MoneyHeld {
		t.Fatalf("the order whose completion failed is %s with money %q, want provisioning and held", o.Status, o.Money)
	}
	mu.Lock()
	if refusals != 2 { // the batch, then the order on its own
		t.Errorf("%d commits with the bad order refused, want 2", refusals)
	}
	bad0 := bad
	bad = 0 // its next attempt is recorded
	mu.Unlock()
	env.Clock.Advance(2 * time.Second) // the default retry base
	env.WaitStatus(t, bad0, store.OrderActive, 5*time.Second)
	env.Settle(t)
	for i, id := range ids {
		assertCapturedOnce(t, env, 100+int64(i), id)
	}
	if n := len(p.createTimes()); n != orders {
		t.Errorf("%d creates for %d orders: the retried order made a second server", n, orders)
	}
	if st := queueStats(t, env); st.Succeeded != orders || st.InFlight != 0 || st.DeadLettered != 0 {
		t.Fatalf("queue: %d succeeded, %d in flight, %d dead-lettered; want %d, 0, 0", st.Succeeded, st.InFlight, st.DeadLettered, orders)
	}
}

// assertCapturedOnce checks that the order's money was held once and captured once.
func assertCapturedOnce(t *testing.T, env *hangartest.Env, user, id int64) {
	t.Helper()
	entries, err := env.Store.Ledger(user, 100)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range entries {
		if e.OrderID == id {
			kinds[e.Kind]++
		}
	}
	if kinds[store.LedgerHold] != 1 || kinds[store.LedgerCapture] != 1 || len(kinds) != 2 {
		t.Errorf("order %d: ledger entries %v, want one hold and one capture", id, kinds)
	}
	if o, _ := env.Store.GetOrder(id); o.Money != store.MoneyCaptured {
		t.Errorf("order %d: money %q, want captured", id, o.Money)
	}
}
