package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// The look-up-only attempt that follows an unanswered last create, finding no server,
// fails with a planError — the type for "order data no retry can fix" — so the order
// is dead-lettered as permanent and the user is told "This order cannot be fulfilled
// ... Ordering the same plan in the same region again will fail the same way; choose
// another plan or region". Nothing was wrong with the plan or region: the provider
// timed out. The user is sent away from a plan that works, and the admin chat's
// notice reads as a catalogue fault.
func TestLookupOnlyFailureIsNotToldAsAPlanFault(t *testing.T) {
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	lin.SetSettle(50 * time.Millisecond)
	env := hangartest.Start(t, hangartest.Options{
		Queue: engine.QueueConfig{MaxRetries: -1, ProvisionTimeout: 300 * time.Millisecond,
			Retry: engine.RetryPolicy{Base: time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	env.Deposit(t, 9, 7000)
	fake.HangNext(1) // the only attempt's create: no answer, and nothing made
	id := env.Order(t, 9, "linode-nano", "ap-northeast")

	var o store.Order
	hangartest.WaitFor(t, 20*time.Second, "the order to end", func() bool {
		env.Clock.Advance(time.Second)
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderActive || o.Status == store.OrderFailed
	})
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
