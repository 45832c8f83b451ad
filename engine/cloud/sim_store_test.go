package cloud_test

import (
	"testing"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/store"
)

// A simulator over the store keeps its servers across a restart: names and addresses
// are never handed out twice, earlier servers are still found by label, and deleting
// an old server deletes only that one.
func TestSimServersSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() (*store.Store, *cloud.Sim) {
		t.Helper()
		st, err := store.Open(store.Options{Dir: dir, SyncWrites: true})
		if err != nil {
			t.Fatal(err)
		}
		s, err := cloud.OpenSim(cloud.SimConfig{Rand: seeded(3)}, st)
		if err != nil {
			t.Fatal(err)
		}
		return st, s
	}
	ctx := t.Context()
	st, s := open()
	first := map[string]cloud.Instance{}
	for _, label := range []string{"hangar-order-1", "hangar-order-2"} {
		in, err := s.Create(ctx, simReq(label))
		if err != nil {
			t.Fatal(err)
		}
		first[label] = in
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, s = open()
	defer st.Close()
	if s.Count() != 2 {
		t.Fatalf("after the restart the simulator holds %d servers, want 2", s.Count())
	}
	for label, want := range first {
		got, ok, err := s.FindByLabel(ctx, label)
		if err != nil || !ok || got != want {
			t.Fatalf("FindByLabel(%s) after the restart = %+v, %v, %v; want %+v", label, got, ok, err, want)
		}
	}
	fresh, err := s.Create(ctx, simReq("hangar-order-3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range first {
		if fresh.ID == old.ID || fresh.IPv4 == old.IPv4 {
			t.Fatalf("the restarted simulator reused %s/%s for %s", old.ID, old.IPv4, fresh.Label)
		}
	}
	if err := s.Delete(ctx, first["hangar-order-1"].ID); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"hangar-order-2", "hangar-order-3"} {
		if _, ok, _ := s.FindByLabel(ctx, label); !ok {
			t.Fatalf("deleting order 1's server also removed %s", label)
		}
	}
	all, err := st.SimServers()
	if err != nil || len(all) != 2 {
		t.Fatalf("stored servers after the delete = %+v, %v; want orders 2 and 3", all, err)
	}
}
