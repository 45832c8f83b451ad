package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// Linode answers a create with the server's public IPv4 at once, status
// "provisioning" (it boots for a minute or more after). The order actor waits only
// for an address, not for cloud.Instance.Ready ("up with a public address"), so the
// order is made active, its first period charged, and the user told "Your server is
// ready … ssh root@IP" while Linode still reports it provisioning and nothing answers
// on that address.
func TestOrderActiveOnlyWhenProviderSaysRunning(t *testing.T) {
	_, lin := linodeFake(t, fakeapi.WithBootDelay(time.Hour))
	env := hangartest.Start(t, hangartest.Options{
		Queue:     engine.QueueConfig{Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Providers: map[string]engine.Provider{"linode": lin},
	})
	env.Deposit(t, 42, 1_000_000)
	id := env.Order(t, 42, "linode-nano", "ap-northeast")

	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		o, _ := env.Store.GetOrder(id)
		if o.Status == store.OrderActive {
			in, err := lin.Get(t.Context(), o.InstanceID)
			if err != nil {
				t.Fatal(err)
			}
			if !in.Ready() {
				t.Fatalf("order %d is active (user told it is ready at %s) while Linode reports the server %q", id, o.IPAddress, in.Status)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
