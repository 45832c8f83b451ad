package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/engine/telegram"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

const vultrKey = "vultr-test-key-0123456789"

// recEnv is an engine on the real clock (settle times are real time at a provider)
// over a Vultr fake, whose labels are not unique.
type recEnv struct {
	st   *store.Store
	eng  *engine.Engine
	reg  *prometheus.Registry
	logs *hangartest.SyncBuffer
}

func startRec(t *testing.T, dir string, fake *vultrfake.Server, settle time.Duration, rc engine.ReconcileConfig, tune ...func(*engine.Config)) *recEnv {
	t.Helper()
	logs := &hangartest.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := store.Open(store.Options{Dir: dir, SyncWrites: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	prov, err := cloud.NewVultr(vultrKey, fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	prov.SetSettle(settle)
	reg := prometheus.NewRegistry()
	cfg := engine.Config{Logger: log, Registry: reg, Providers: map[string]engine.Provider{"vultr": prov},
		Queue:     engine.QueueConfig{Tick: 5 * time.Millisecond, PollInterval: 10 * time.Millisecond, Retry: engine.RetryPolicy{Base: 20 * time.Millisecond}},
		Reconcile: rc, AdminChatID: 999,
	}
	for _, f := range tune {
		f(&cfg)
	}
	eng, err := engine.New(cfg, st, telegram.Off{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	e := &recEnv{st: st, eng: eng, reg: reg, logs: logs}
	t.Cleanup(e.stop)
	return e
}

func (e *recEnv) stop() {
	if e.eng == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.eng.Stop(ctx)
	_ = e.st.Close()
	e.eng = nil
}

func (e *recEnv) order(t *testing.T, user int64) store.Order {
	t.Helper()
	if _, err := e.st.Deposit(user, 1_000_000); err != nil {
		t.Fatal(err)
	}
	o, err := e.eng.CreateOrder(engine.OrderRequest{UserID: user, TelegramUserID: user, SpecID: "vultr-1g", Region: "nrt"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (e *recEnv) waitStatus(t *testing.T, id int64, status string) store.Order {
	t.Helper()
	var o store.Order
	hangartest.WaitFor(t, 20*time.Second, "order "+status, func() bool {
		o, _ = e.st.GetOrder(id)
		return o.Status == status
	})
	return o
}

func labelled(fake *vultrfake.Server, label string) []vultrfake.Instance {
	var out []vultrfake.Instance
	for _, in := range fake.Instances() {
		if in.Label == label {
			out = append(out, in)
		}
	}
	return out
}

// The reconciler reports duplicates and orphans, deletes the duplicates of a running
// order always, and orphans only when the operator allows it; its findings show in
// /metrics and are kept in the store.
func TestReconcileDuplicatesAndOrphans(t *testing.T) {
	for _, tc := range []struct {
		name          string
		deleteOrphans bool
	}{{"orphans reported", false}, {"orphans deleted", true}} {
		t.Run(tc.name, func(t *testing.T) {
			fake := vultrfake.New(vultrKey)
			defer fake.Close()
			env := startRec(t, t.TempDir(), fake, time.Millisecond, engine.ReconcileConfig{Every: -1, DeleteOrphans: tc.deleteOrphans})
			live := env.order(t, 42)
			active := env.waitStatus(t, live.ID, store.OrderActive)
			dup := fake.Seed(engine.InstanceLabel(live.ID), "nrt", "vc2-1c-1gb") // a second server for a running order
			orphan := fake.Seed(engine.InstanceLabel(9999), "nrt", "vc2-1c-1gb") // no such order
			stranger := fake.Seed("web-1", "nrt", "vc2-1c-1gb")                  // not hangar's: never touched

			rep, err := env.eng.Reconcile(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Duplicates) != 1 || rep.Duplicates[0].InstanceID != dup.ID || !rep.Duplicates[0].Deleted || rep.Duplicates[0].Kept != active.InstanceID {
				t.Fatalf("duplicates = %+v; want %s deleted, %s kept", rep.Duplicates, dup.ID, active.InstanceID)
			}
			if len(rep.Orphans) != 1 || rep.Orphans[0].InstanceID != orphan.ID || rep.Orphans[0].Deleted != tc.deleteOrphans {
				t.Fatalf("orphans = %+v; want %s, deleted=%v", rep.Orphans, orphan.ID, tc.deleteOrphans)
			}
			if got := labelled(fake, engine.InstanceLabel(live.ID)); len(got) != 1 || got[0].ID != active.InstanceID {
				t.Fatalf("order %d's servers after the reconcile: %+v; want only %s", live.ID, got, active.InstanceID)
			}
			if got := len(labelled(fake, engine.InstanceLabel(9999))); (got == 0) != tc.deleteOrphans {
				t.Fatalf("orphan servers left: %d (delete orphans: %v)", got, tc.deleteOrphans)
			}
			if len(labelled(fake, stranger.Label)) != 1 {
				t.Fatal("the reconciler touched a server hangar did not create")
			}
			wantOrphans := 1.0
			if tc.deleteOrphans {
				wantOrphans = 0
			}
			if got := gauge(t, env.reg, "hangar_reconcile_orphans"); got != wantOrphans {
				t.Errorf("hangar_reconcile_orphans = %v, want %v", got, wantOrphans)
			}
			if got := gauge(t, env.reg, "hangar_reconcile_duplicates"); got != 0 {
				t.Errorf("hangar_reconcile_duplicates = %v, want 0 (deleted)", got)
			}
			last, ok, err := env.eng.LastReconcile()
			if err != nil || !ok || len(last.Orphans) != 1 || len(last.Duplicates) != 1 {
				t.Fatalf("LastReconcile = %+v, %v, %v", last, ok, err)
			}
		})
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("%s not in the registry", name)
	return 0
}

// An order whose create was cut by a stop while the provider was still making the
// server is not created again at the next start: it waits the provider's settle time,
// then finds the server by label. Without the settle it would find nothing (the slow
// create is not listable yet) and make a second server.
func TestResumedOrderWaitsForTheCreateInFlight(t *testing.T) {
	fake := vultrfake.New(vultrKey, fakeapi.WithCreateDelay(400*time.Millisecond), fakeapi.WithDuplicateLabels())
	defer fake.Close()
	dir := t.TempDir()
	settle := time.Second
	first := startRec(t, dir, fake, settle, engine.ReconcileConfig{Every: -1})
	o := first.order(t, 42)
	if !fake.Wait(10*time.Second, func() bool { return countCreates(fake) > 0 }) {
		t.Fatal("the create never reached the provider")
	}
	first.stop() // the create is cut on hangar's side; the provider finishes it
	second := startRec(t, dir, fake, settle, engine.ReconcileConfig{Every: -1})
	done := second.waitStatus(t, o.ID, store.OrderActive)
	servers := labelled(fake, engine.InstanceLabel(o.ID))
	if len(servers) != 1 || servers[0].ID != done.InstanceID {
		t.Fatalf("order %d has servers %+v at the provider, want exactly its own %s", o.ID, servers, done.InstanceID)
	}
	if creates := countCreates(fake); creates != 1 {
		t.Fatalf("%d creates reached the provider, want 1", creates)
	}
	if !strings.Contains(second.logs.String(), "settle") {
		t.Error("the log does not say the order waited for the provider")
	}
}

func countCreates(fake *vultrfake.Server) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v2/instances" {
			n++
		}
	}
	return n
}

// A termination the provider refuses is recorded and retried until the provider
// confirms, across a restart; only then is the order terminated.
func TestRefusedTerminationIsRetriedUntilConfirmed(t *testing.T) {
	fake := vultrfake.New(vultrKey)
	defer fake.Close()
	dir := t.TempDir()
	rc := engine.ReconcileConfig{Every: -1, RetryTerminations: 50 * time.Millisecond}
	first := startRec(t, dir, fake, time.Millisecond, engine.ReconcileConfig{Every: -1, RetryTerminations: time.Hour})
	o := first.order(t, 42)
	active := first.waitStatus(t, o.ID, store.OrderActive)
	fake.FailNext(1, http.StatusServiceUnavailable)
	if _, err := first.eng.TerminateOrder(o.ID); err == nil {
		t.Fatal("the termination succeeded although the provider refused it")
	}
	got, _ := first.st.GetOrder(o.ID)
	if got.Status != store.OrderActive || !got.Terminating {
		t.Fatalf("after the refusal the order is %s (terminating %v), want active and terminating", got.Status, got.Terminating)
	}
	first.stop() // the retry must outlive a restart

	second := startRec(t, dir, fake, time.Millisecond, rc)
	done := second.waitStatus(t, o.ID, store.OrderTerminated)
	if done.Terminating {
		t.Error("a terminated order is still marked terminating")
	}
	if left := labelled(fake, engine.InstanceLabel(o.ID)); len(left) != 0 {
		t.Fatalf("server %s still exists at the provider: %+v", active.InstanceID, left)
	}
}

// A create that times out may still be making the server: the retry waits for the
// provider's settle time and finds it, instead of creating again at once (which, with
// a create slower than the timeout, would make a server per attempt).
func TestTimedOutCreateIsNotRepeatedBeforeTheSettle(t *testing.T) {
	fake := vultrfake.New(vultrKey, fakeapi.WithCreateDelay(500*time.Millisecond), fakeapi.WithDuplicateLabels())
	defer fake.Close()
	env := startRec(t, t.TempDir(), fake, time.Second, engine.ReconcileConfig{Every: -1}, func(c *engine.Config) {
		c.Queue.ProvisionTimeout = 250 * time.Millisecond
		c.Queue.MaxRetries = 5
	})
	o := env.order(t, 42)
	done := env.waitStatus(t, o.ID, store.OrderActive)
	servers := labelled(fake, engine.InstanceLabel(o.ID))
	if len(servers) != 1 || servers[0].ID != done.InstanceID {
		t.Fatalf("order %d has servers %+v, want exactly its own %s", o.ID, servers, done.InstanceID)
	}
	if n := countCreates(fake); n != 1 {
		t.Fatalf("%d creates reached the provider, want 1", n)
	}
}
