package engine_test

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// The reconciler files every server "made before its order" as an orphan before it
// looks at whose server it is, so an active order's own server — the one in
// o.InstanceID, handed to the user and billed every period — is deleted under
// --reconcile-delete-orphans as soon as its creation time reads more than a minute
// before the order's. That happens when hangar's clock ran ahead of the provider's
// when the order was made (the NTP step this same change set guards against for rate
// windows and backups), and to every order that adopted a reused label's server
// before this version (the case the change describes): after the upgrade the first
// reconcile deletes the running server a paying user holds.
func TestReconcilerNeverDeletesAnActiveOrdersOwnServer(t *testing.T) {
	fake := vultrfake.New(vultrKey, fakeapi.WithBootDelay(0))
	defer fake.Close()
	env := startRec(t, t.TempDir(), fake, time.Millisecond, engine.ReconcileConfig{Every: -1, DeleteOrphans: true})
	defer env.stop()
	o := env.order(t, 42)
	active := env.waitStatus(t, o.ID, store.OrderActive)
	if active.InstanceID == "" {
		t.Fatalf("active order %d has no server", o.ID)
	}
	// The provider's creation time reads five minutes before the order's.
	fake.Store.Change(active.InstanceID, func(in vultrfake.Instance) vultrfake.Instance {
		in.Created = o.CreatedAt.Add(-5 * time.Minute)
		return in
	})
	rep, err := env.eng.Reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fake.Store.Lookup(active.InstanceID); !ok {
		t.Fatalf("the reconciler deleted server %s, which active order %d holds (its InstanceID, billed every period); orphans %+v",
			active.InstanceID, o.ID, rep.Orphans)
	}
}

// Vultr's labels are not unique and its FindByLabel answers the oldest holder of a
// label. When a stranger's older server holds the order's label (the case the change
// set addresses) and an attempt that made the order's server fails after the create
// was answered (here: the server is still booting when ProvisionTimeout ends), the
// retry's FindByLabel answers the stranger's server, findServer discards it as
// "made before the order", and the order creates another server of its own: one per
// attempt. Before the change the stranger's server was adopted; now the order's own
// servers multiply, against "each order creates at most one server".
func TestRetryDoesNotCreateASecondServerBesideAnOlderLabelHolder(t *testing.T) {
	fake := vultrfake.New(vultrKey, fakeapi.WithBootDelay(time.Hour)) // never ready in the test
	defer fake.Close()
	env := startRec(t, t.TempDir(), fake, time.Millisecond, engine.ReconcileConfig{Every: -1}, func(c *engine.Config) {
		c.Queue.MaxRetries = 2
		c.Queue.ProvisionTimeout = 300 * time.Millisecond
	})
	defer env.stop()
	if _, _, err := env.eng.PauseQueue("test"); err != nil {
		t.Fatal(err)
	}
	o := env.order(t, 42)
	foreign := fake.Seed(engine.InstanceLabel(o.ID), "nrt", "vc2-1c-1gb")
	fake.Store.Change(foreign.ID, func(in vultrfake.Instance) vultrfake.Instance {
		in.Created = o.CreatedAt.Add(-time.Hour) // an earlier install's, long running
		return in
	})
	if _, _, err := env.eng.ResumeQueue("test"); err != nil {
		t.Fatal(err)
	}
	var final store.Order
	hangartest.WaitFor(t, 30*time.Second, "the order to end", func() bool {
		final, _ = env.st.GetOrder(o.ID)
		return final.Status == store.OrderFailed || final.Status == store.OrderActive
	})
	var mine []string
	for _, in := range labelled(fake, engine.InstanceLabel(o.ID)) {
		if in.ID != foreign.ID {
			mine = append(mine, in.ID)
		}
	}
	if len(mine) > 1 {
		t.Fatalf("order %d (%s after %d attempts) made %d servers %v beside the stranger's %s: each retry created another",
			o.ID, final.Status, final.Attempts, len(mine), mine, foreign.ID)
	}
}
