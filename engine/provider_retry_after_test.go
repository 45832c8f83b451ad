package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A provider that answers a create with 429 and Retry-After: 60 has said when it will
// take the next request. The order's retry must not be due before then: retried at the
// queue's own 2 s/4 s/8 s it is refused three more times in the provider's window and
// dead-lettered, although nothing was wrong but the pace.
func TestOrderRetryHonoursProviderRetryAfter(t *testing.T) {
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	env := hangartest.Start(t, hangartest.Options{
		Queue:     engine.QueueConfig{MaxRetries: 3, Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	env.Deposit(t, 42, 1_000_000)
	const wait = 60 * time.Second
	fake.RateLimitNext(1, wait)
	id := env.Order(t, 42, "linode-nano", "ap-northeast")

	var o store.Order
	hangartest.WaitFor(t, 10*time.Second, "the 429 to be recorded", func() bool {
		o, _ = env.Store.GetOrder(id)
		n := len(o.History)
		return n > 0 && o.History[n-1].Event == "retry_scheduled"
	})
	if o.Status != store.OrderPending {
		t.Fatalf("order is %s, want pending (history %+v)", o.Status, o.History)
	}
	if got := o.DueAt.Sub(env.Clock.Now()); got < wait {
		t.Errorf("the retry after a 429 with Retry-After %v is due in %v (error %q): the provider's Retry-After is ignored", wait, got, o.LastError)
	}
}

// The same for billing's provider calls: a power off answered 429 with Retry-After:
// 60 is retried after the queue's own 20 ms backoff, inside the provider's window.
func TestPowerOffRetryHonoursProviderRetryAfter(t *testing.T) {
	env, fake, id := linodeBilling(t)
	const wait = 60 * time.Second
	fake.RateLimitNext(1, wait)
	o, _ := env.Store.GetOrder(id)
	env.Clock.Advance(o.PaidUntil.Sub(env.Clock.Now())) // unpaid: suspend and power off
	hangartest.WaitFor(t, 10*time.Second, "the power off's 429 recorded", func() bool {
		o, _ = env.Store.GetOrder(id)
		return o.OpAttempts > 0 || o.PoweredOff
	})
	if got := o.OpDue.Sub(env.Clock.Now()); o.PoweredOff || got < wait {
		t.Errorf("the power off retry after a 429 with Retry-After %v is due in %v (powered off %v, error %q): the provider's Retry-After is ignored",
			wait, got, o.PoweredOff, o.LastError)
	}
}
