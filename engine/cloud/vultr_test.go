package cloud_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
)

const vultrKey = "VULTRKEY3b9d0e1f"

type vultrFake struct{ *vultrfake.Server }

func (f vultrFake) requests() int { return len(f.Requests()) }

func (f vultrFake) seed(label string) string { return f.Seed(label, "icn", "vc2-1c-1gb").ID }

func openVultr(key, url string, timeout time.Duration) (cloud.Provider, error) {
	return cloud.NewVultr(key, url, httpClient(timeout))
}

func vultrReq(label string) cloud.CreateRequest {
	return cloud.CreateRequest{Label: label, Region: "icn", Plan: "vc2-1c-1gb", RootPassword: rootPass}
}

func vultrCase() providerCase {
	return providerCase{
		name:      "vultr",
		secret:    vultrKey,
		open:      openVultr,
		newFake:   func() fakeCloud { return vultrFake{vultrfake.New(vultrKey)} },
		req:       vultrReq,
		badPlan:   cloud.CreateRequest{Label: "a3", Region: "icn", Plan: "vc2-bogus", RootPassword: rootPass},
		badRegion: cloud.CreateRequest{Label: "a4", Region: "mars", Plan: "vc2-1c-1gb", RootPassword: rootPass},
	}
}

func setupVultr(t *testing.T, opts ...fakeapi.Option) (*cloud.Vultr, *vultrfake.Server) {
	t.Helper()
	fake := vultrfake.New(vultrKey, opts...)
	t.Cleanup(fake.Close)
	p, err := cloud.NewVultr(vultrKey, fake.URL(), &http.Client{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p, fake
}

func TestVultrLifecycle(t *testing.T) {
	p, fake := setupVultr(t)
	in, err := p.Create(t.Context(), vultrReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	if in.ID == "" || in.Label != "hangar-order-1" || in.Region != "icn" || in.Plan != "vc2-1c-1gb" {
		t.Fatalf("created %+v", in)
	}
	if in.Status != "pending" || in.IPv4 != "" || in.Ready() {
		t.Errorf("a new Vultr instance is pending without an address (0.0.0.0 means none); got %+v", in)
	}
	want, ok := fake.Password("hangar-order-1")
	if !ok || want == "" || in.RootPassword != want {
		t.Errorf("Create returned password %q, the provider generated %q", in.RootPassword, want)
	}
	insts := fake.Instances()
	if len(insts) != 1 || insts[0].OsID != cloud.VultrDefaultOS || !slices.Contains(insts[0].Tags, cloud.Tag) {
		t.Fatalf("provider holds %+v", insts)
	}
	checkFound(t, p, vultrFake{fake}, in)
}

func TestVultrBootDelay(t *testing.T) {
	p, _ := setupVultr(t, fakeapi.WithBootDelay(time.Hour))
	in, err := p.Create(t.Context(), vultrReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Get(t.Context(), in.ID)
	if err != nil || got.Status != "pending" || got.IPv4 != "" || got.Ready() {
		t.Fatalf("Get during boot = %+v, %v", got, err)
	}
}

func TestVultrImage(t *testing.T) {
	p, fake := setupVultr(t)
	req := vultrReq("hangar-order-1")
	req.Image = "2284"
	if _, err := p.Create(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if insts := fake.Instances(); len(insts) != 1 || insts[0].OsID != 2284 {
		t.Fatalf("provider holds %+v", insts)
	}
	req.Image = "debian-12"
	if _, err := p.Create(t.Context(), req); !cloud.IsPermanent(err) {
		t.Fatalf("an image that is not an os_id = %v, want permanent", err)
	}
}

// Vultr labels are not unique: the lookup must settle on one instance, the oldest.
func TestVultrFindByLabelPrefersOldest(t *testing.T) {
	p, fake := setupVultr(t)
	first := fake.Seed("hangar-order-7", "icn", "vc2-1c-1gb")
	fake.Seed("hangar-order-7", "icn", "vc2-1c-1gb")
	got, ok, err := p.FindByLabel(t.Context(), "hangar-order-7")
	if err != nil || !ok || got.ID != first.ID {
		t.Fatalf("FindByLabel = %+v, %v, %v; want %s", got, ok, err, first.ID)
	}
}

// Of several servers with one label, FindByLabel answers the oldest, as its contract
// says, whatever order Vultr lists them in.
func TestVultrFindByLabelAnswersTheOldest(t *testing.T) {
	p, fake := setupVultr(t)
	first := fake.Seed("hangar-order-7", "icn", "vc2-1c-1gb")
	second := fake.Seed("hangar-order-7", "icn", "vc2-1c-1gb")
	fake.Store.Change(second.ID, func(in vultrfake.Instance) vultrfake.Instance {
		in.Created = first.Created.Add(-time.Hour)
		return in
	})
	in, ok, err := p.FindByLabel(t.Context(), "hangar-order-7")
	if err != nil || !ok {
		t.Fatalf("FindByLabel: %v, %v", ok, err)
	}
	if in.ID != second.ID {
		t.Fatalf("FindByLabel answered %s, made at %v; the oldest is %s", in.ID, in.Created, second.ID)
	}
}
