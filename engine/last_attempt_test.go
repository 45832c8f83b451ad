package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// The last attempt's create times out after the provider has made the server. Any
// earlier attempt would wait the settle time and find the server by label; the last
// one dead-letters at once: the user is told the order failed and gets the hold
// back, while the server hangar asked for runs on at the provider, never charged,
// never handed over, never deleted (orphans are only reported by default) — the
// seed's own failure mode, "a server created but never charged".
func TestLastAttemptUnansweredCreateIsLookedFor(t *testing.T) {
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	lin.SetSettle(50 * time.Millisecond)
	env := hangartest.Start(t, hangartest.Options{
		Queue: engine.QueueConfig{MaxRetries: 1, ProvisionTimeout: 500 * time.Millisecond,
			Retry: engine.RetryPolicy{Base: time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	env.Deposit(t, 9, 7000)
	fake.FailNext(1, 500)  // attempt 1: the create is refused, nothing made
	fake.CreateThenHang(1) // attempt 2 (the last): the server is made, the answer never comes
	id := env.Order(t, 9, "linode-nano", "ap-northeast")

	var o store.Order
	hangartest.WaitFor(t, 20*time.Second, "the order to end", func() bool {
		env.Clock.Advance(time.Second) // let retries and settle times come due
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderActive || o.Status == store.OrderFailed
	})
	if o.Status == store.OrderFailed && fake.Count() > 0 {
		b, _ := env.Store.GetBalance(9)
		t.Fatalf("order %d dead-lettered (%q) while its server %+v runs at the provider; balance %+v (nothing charged)",
			id, o.LastError, fake.Instances(), b)
	}
}
