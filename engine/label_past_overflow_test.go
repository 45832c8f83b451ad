package engine_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// The reconciler moves new order ids past the highest hangar-order-<n> label at the
// provider that no order here has, whatever n is. The label is only checked to be one
// hangar could have made, and any int64 passes: a server labelled
// hangar-order-9223372036854775807 (typed by hand, or another tool's) makes the next
// order id 2^63, which is negative as the int64 every order id is. Expected: an id past
// what a store could ever have handed out is reported, not followed, and new order ids
// stay positive, and the report says so.
func TestReconcileNeverMovesOrderIDsPastInt64(t *testing.T) {
	fake, lin := linodeFake(t, fakeapi.WithBootDelay(0))
	env := hangartest.Start(t, hangartest.Options{
		Queue:     engine.QueueConfig{Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	fake.Seed(engine.InstanceLabel(math.MaxInt64), "ap-northeast", "g6-nanode-1")
	rep, err := env.Engine.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Reported in the report's errors, not only logged: a reconcile after a restore
	// that could not move the ids is not done, and serve keeps the restore's mark.
	label := engine.InstanceLabel(math.MaxInt64)
	if !slices.ContainsFunc(rep.Errors, func(e string) bool { return strings.Contains(e, label) }) {
		t.Errorf("the reconcile report's errors %q do not say the ids could not move past %s", rep.Errors, label)
	}
	env.Deposit(t, 42, 1_000_000)
	r := env.Bearer(t, "POST", "/orders", []byte(`{"user_id":42,"telegram_user_id":"42","spec_id":"linode-nano","region":"ap-northeast"}`))
	var got struct {
		ID int64 `json:"order_id"`
	}
	if r.Status/100 == 2 {
		r.JSON(t, &got)
	}
	if r.Status/100 != 2 || got.ID <= 0 {
		t.Fatalf("an order placed after a reconcile that saw hangar-order-%d: %d %s (id %d); want an order with a positive id",
			int64(math.MaxInt64), r.Status, r.Body, got.ID)
	}
}
