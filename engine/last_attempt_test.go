package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// lastAttemptEnv runs orders on the Linode fake with a short settle time, maxRetries
// retries and user 9 funded, for the tests of a last create that gets no answer.
func lastAttemptEnv(t *testing.T, maxRetries int, timeout time.Duration) (*linodefake.Server, *hangartest.Env) {
	t.Helper()
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	lin.SetSettle(50 * time.Millisecond)
	env := hangartest.Start(t, hangartest.Options{
		Queue: engine.QueueConfig{MaxRetries: maxRetries, ProvisionTimeout: timeout,
			Retry: engine.RetryPolicy{Base: time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	env.Deposit(t, 9, 7000)
	return fake, env
}

// orderToEnd advances the clock (retries and settle times come due on it) until the
// order is active or failed.
func orderToEnd(t *testing.T, env *hangartest.Env, id int64) store.Order {
	t.Helper()
	var o store.Order
	hangartest.WaitFor(t, 20*time.Second, "the order to end", func() bool {
		env.Clock.Advance(time.Second)
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderActive || o.Status == store.OrderFailed
	})
	return o
}

// The last attempt's create times out after the provider has made the server. Any
// earlier attempt would wait the settle time and find the server by label; the last
// one dead-lettered at once: the user was told the order failed and got the hold
// back, while the server hangar asked for ran on at the provider, never charged,
// never handed over, never deleted (orphans are only reported by default) — the
// seed's own failure mode, "a server created but never charged".
func TestLastAttemptUnansweredCreateIsLookedFor(t *testing.T) {
	fake, env := lastAttemptEnv(t, 1, 500*time.Millisecond)
	fake.FailNext(1, 500)  // attempt 1: the create is refused, nothing made
	fake.CreateThenHang(1) // attempt 2 (the last): the server is made, the answer never comes
	id := env.Order(t, 9, "linode-nano", "ap-northeast")

	o := orderToEnd(t, env, id)
	if o.Status == store.OrderFailed && fake.Count() > 0 {
		b, _ := env.Store.GetBalance(9)
		t.Fatalf("order %d dead-lettered (%q) while its server %+v runs at the provider; balance %+v (nothing charged)",
			id, o.LastError, fake.Instances(), b)
	}
}

// The look-up-only attempt that follows an unanswered last create, finding no server,
// failed with a planError (the type for "order data no retry can fix"), so the user
// was told "This order cannot be fulfilled ... choose another plan or region", though
// nothing was wrong with the plan or region: the provider timed out.
func TestLookupOnlyFailureIsNotToldAsAPlanFault(t *testing.T) {
	fake, env := lastAttemptEnv(t, -1, 300*time.Millisecond)
	fake.HangNext(1) // the only attempt's create: no answer, and nothing made
	id := env.Order(t, 9, "linode-nano", "ap-northeast")

	o := orderToEnd(t, env, id)
	if o.Status != store.OrderFailed {
		t.Skipf("order %d is %s; the scenario needs it dead-lettered", id, o.Status)
	}
	var told string
	hangartest.WaitFor(t, 5*time.Second, "the user told", func() bool {
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == 9 && strings.Contains(m.Text, "failed") {
				told = m.Text
				return true
			}
		}
		return false
	})
	if strings.Contains(told, "fail the same way") || strings.Contains(told, "cannot be fulfilled") {
		t.Fatalf("an order whose create timed out was told it can never be fulfilled:\n%s\n(last error %q)", told, o.LastError)
	}
}
