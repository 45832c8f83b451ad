package cloud_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
)

const vultrKey = "VULTRKEY3b9d0e1f"

type vultrBundle struct {
	fake *vultrfake.Server
	p    *cloud.Vultr
}

func setupVultr(t *testing.T, timeout time.Duration, opts ...vultrfake.Option) vultrBundle {
	t.Helper()
	fake := vultrfake.New(vultrKey, opts...)
	t.Cleanup(fake.Close)
	p, err := cloud.NewVultr(vultrKey, fake.URL(), &http.Client{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return vultrBundle{fake: fake, p: p}
}

func vultrReq(label string) cloud.CreateRequest {
	return cloud.CreateRequest{Label: label, Region: "icn", Plan: "vc2-1c-1gb", RootPassword: rootPass}
}

func TestVultrLifecycle(t *testing.T) {
	ctx := t.Context()
	b := setupVultr(t, 5*time.Second)

	in, err := b.p.Create(ctx, vultrReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	if in.ID == "" || in.Label != "hangar-order-1" || in.Region != "icn" || in.Plan != "vc2-1c-1gb" {
		t.Fatalf("created %+v", in)
	}
	if in.Status != "pending" || in.IPv4 != "" || in.Ready() {
		t.Errorf("a new Vultr instance is pending without an address (0.0.0.0 means none); got %+v", in)
	}
	want, ok := b.fake.Password("hangar-order-1")
	if !ok || want == "" || in.RootPassword != want {
		t.Errorf("Create returned password %q, the provider generated %q", in.RootPassword, want)
	}
	insts := b.fake.Instances()
	if len(insts) != 1 || insts[0].OsID != cloud.VultrDefaultOS || !slices.Contains(insts[0].Tags, cloud.Tag) {
		t.Fatalf("provider holds %+v", insts)
	}

	found, ok, err := b.p.FindByLabel(ctx, "hangar-order-1")
	if err != nil || !ok || found.ID != in.ID || found.RootPassword != "" {
		t.Fatalf("FindByLabel = %+v, %v, %v", found, ok, err)
	}
	if _, ok, err := b.p.FindByLabel(ctx, "hangar-order-2"); err != nil || ok {
		t.Fatalf("FindByLabel of an unknown label = %v, %v", ok, err)
	}
	got, err := b.p.Get(ctx, in.ID)
	if err != nil || got.ID != in.ID || got.IPv4 == "" || got.Status != "active" || !got.Ready() {
		t.Fatalf("Get = %+v, %v", got, err)
	}

	if err := b.p.Delete(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if b.fake.Count() != 0 {
		t.Fatal("instance still exists after Delete")
	}
	if err := b.p.Delete(ctx, in.ID); err != nil {
		t.Errorf("deleting a missing instance = %v, want nil", err)
	}
	_, err = b.p.Get(ctx, in.ID)
	if !cloud.IsNotFound(err) || !cloud.IsPermanent(err) {
		t.Errorf("Get after Delete = %v, want a permanent not-found", err)
	}
}

func TestVultrBootDelay(t *testing.T) {
	b := setupVultr(t, 5*time.Second, vultrfake.WithBootDelay(time.Hour))
	in, err := b.p.Create(t.Context(), vultrReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.p.Get(t.Context(), in.ID)
	if err != nil || got.Status != "pending" || got.IPv4 != "" || got.Ready() {
		t.Fatalf("Get during boot = %+v, %v", got, err)
	}
}

func TestVultrImage(t *testing.T) {
	b := setupVultr(t, 5*time.Second)
	req := vultrReq("hangar-order-1")
	req.Image = "2284"
	if _, err := b.p.Create(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if insts := b.fake.Instances(); len(insts) != 1 || insts[0].OsID != 2284 {
		t.Fatalf("provider holds %+v", insts)
	}
	req.Image = "debian-12"
	if _, err := b.p.Create(t.Context(), req); !cloud.IsPermanent(err) {
		t.Fatalf("an image that is not an os_id = %v, want permanent", err)
	}
}

// Vultr labels are not unique: the lookup must settle on one instance, the oldest.
func TestVultrFindByLabelPrefersOldest(t *testing.T) {
	b := setupVultr(t, 5*time.Second)
	first := b.fake.Seed("hangar-order-7", "icn", "vc2-1c-1gb")
	b.fake.Seed("hangar-order-7", "icn", "vc2-1c-1gb")
	got, ok, err := b.p.FindByLabel(t.Context(), "hangar-order-7")
	if err != nil || !ok || got.ID != first.ID {
		t.Fatalf("FindByLabel = %+v, %v, %v; want %s", got, ok, err, first.ID)
	}
}

func TestVultrErrors(t *testing.T) {
	b := setupVultr(t, 300*time.Millisecond)
	seeded := b.fake.Seed("hangar-order-seeded", "icn", "vc2-1c-1gb")
	get := func(ctx context.Context, p cloud.Provider) error {
		_, err := p.Get(ctx, seeded.ID)
		return err
	}
	del := func(ctx context.Context, p cloud.Provider) error { return p.Delete(ctx, seeded.ID) }
	for _, tc := range []errorCase{
		{name: "500 on create", call: create(vultrReq("a1")), inject: func() { b.fake.FailNext(1, 500) }, retryable: true, status: 500},
		{name: "503 on find", call: find, inject: func() { b.fake.FailNext(1, 503) }, retryable: true, status: 503},
		{name: "502 on get", call: get, inject: func() { b.fake.FailNext(1, 502) }, retryable: true, status: 502},
		{name: "500 on delete", call: del, inject: func() { b.fake.FailNext(1, 500) }, retryable: true, status: 500},
		{name: "429 with Retry-After", call: create(vultrReq("a2")), inject: func() { b.fake.RateLimitNext(1, 3*time.Second) },
			retryable: true, status: 429, retryAfter: 3 * time.Second},
		{name: "invalid plan", call: create(cloud.CreateRequest{Label: "a3", Region: "icn", Plan: "vc2-bogus", RootPassword: rootPass}),
			permanent: true, status: 400},
		{name: "invalid region", call: create(cloud.CreateRequest{Label: "a4", Region: "mars", Plan: "vc2-1c-1gb", RootPassword: rootPass}),
			permanent: true, status: 400},
		{name: "payment required", call: create(vultrReq("a5")), inject: func() { b.fake.FailNext(1, 402) }, permanent: true, status: 402},
		{name: "timeout on create", call: create(vultrReq("a6")), inject: func() { b.fake.HangNext(1) }, retryable: true},
		{name: "timeout on get", call: get, inject: func() { b.fake.HangNext(1) }, retryable: true},
		{name: "cancelled by caller", call: create(vultrReq("a7")), ctx: cancelled},
	} {
		t.Run(tc.name, func(t *testing.T) { checkError(t, tc, b.p, vultrKey, rootPass) })
	}
}

func TestVultrUnauthorizedAndUnreachable(t *testing.T) {
	fake := vultrfake.New(vultrKey)
	t.Cleanup(fake.Close)
	wrong, err := cloud.NewVultr("WRONGKEY0042", fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, errorCase{call: create(vultrReq("b1")), permanent: true, status: 401}, wrong, "WRONGKEY0042", rootPass)

	gone := vultrfake.New(vultrKey)
	gone.Close()
	unreachable, err := cloud.NewVultr(vultrKey, gone.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, errorCase{call: create(vultrReq("b2")), retryable: true}, unreachable, vultrKey, rootPass)
}

func TestVultrCreateThenTimeout(t *testing.T) {
	b := setupVultr(t, 300*time.Millisecond)
	b.fake.CreateThenHang(1)
	req := vultrReq("hangar-order-42")

	_, err := b.p.Create(t.Context(), req)
	if !cloud.IsRetryable(err) {
		t.Fatalf("create whose answer was lost = %v, want retryable", err)
	}
	noSecrets(t, err, vultrKey, rootPass)
	found, ok, err := b.p.FindByLabel(t.Context(), req.Label)
	if err != nil || !ok || found.Label != req.Label {
		t.Fatalf("FindByLabel after lost create = %+v, %v, %v", found, ok, err)
	}
	if b.fake.Count() != 1 {
		t.Fatalf("%d instances, want exactly 1", b.fake.Count())
	}
}

func TestVultrSendsNoRetriesOfItsOwn(t *testing.T) {
	b := setupVultr(t, 5*time.Second)
	b.fake.FailNext(3, 503)
	if _, err := b.p.Create(t.Context(), vultrReq("c1")); !cloud.IsRetryable(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(b.fake.Requests()); n != 1 {
		t.Fatalf("%d requests for one call; the queue owns retries", n)
	}
}
