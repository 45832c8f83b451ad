package cloud_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
)

const (
	linodeToken = "linode-token-7f3a9c"
	rootPass    = `Root"Pass\w0rd-9xQ`
)

type linodeBundle struct {
	fake *linodefake.Server
	p    *cloud.Linode
}

func setupLinode(t *testing.T, timeout time.Duration, opts ...linodefake.Option) linodeBundle {
	t.Helper()
	fake := linodefake.New(linodeToken, opts...)
	t.Cleanup(fake.Close)
	p, err := cloud.NewLinode(linodeToken, fake.URL(), &http.Client{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return linodeBundle{fake: fake, p: p}
}

func linodeReq(label string) cloud.CreateRequest {
	return cloud.CreateRequest{Label: label, Region: "ap-northeast", Plan: "g6-nanode-1", RootPassword: rootPass}
}

// noSecrets fails when an error's text carries a secret.
func noSecrets(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains a secret", err)
		}
	}
}

func TestLinodeLifecycle(t *testing.T) {
	ctx := t.Context()
	b := setupLinode(t, 5*time.Second)

	in, err := b.p.Create(ctx, linodeReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	if in.ID == "" || in.Label != "hangar-order-1" || in.Region != "ap-northeast" || in.Plan != "g6-nanode-1" {
		t.Fatalf("created %+v", in)
	}
	if in.IPv4 == "" || in.Status != "provisioning" {
		t.Errorf("a new Linode has its address and is provisioning; got %+v", in)
	}
	if in.RootPassword != "" {
		t.Errorf("hangar chose the Linode password; Create must not hand one back")
	}
	if got, _ := b.fake.RootPass("hangar-order-1"); got != rootPass {
		t.Errorf("root_pass at the provider = %q", got)
	}
	insts := b.fake.Instances()
	if len(insts) != 1 || insts[0].Image != cloud.LinodeDefaultImage || !slices.Contains(insts[0].Tags, cloud.Tag) {
		t.Fatalf("provider holds %+v", insts)
	}

	found, ok, err := b.p.FindByLabel(ctx, "hangar-order-1")
	if err != nil || !ok || found.ID != in.ID {
		t.Fatalf("FindByLabel = %+v, %v, %v", found, ok, err)
	}
	if _, ok, err := b.p.FindByLabel(ctx, "hangar-order-2"); err != nil || ok {
		t.Fatalf("FindByLabel of an unknown label = %v, %v", ok, err)
	}
	got, err := b.p.Get(ctx, in.ID)
	if err != nil || got.ID != in.ID || got.IPv4 != in.IPv4 || !got.Ready() {
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

func TestLinodeBootDelay(t *testing.T) {
	b := setupLinode(t, 5*time.Second, linodefake.WithBootDelay(time.Hour))
	in, err := b.p.Create(t.Context(), linodeReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.p.Get(t.Context(), in.ID)
	if err != nil || got.Status != "provisioning" || got.Ready() {
		t.Fatalf("Get during boot = %+v, %v", got, err)
	}
}

func TestLinodeBaseURLForms(t *testing.T) {
	fake := linodefake.New(linodeToken)
	t.Cleanup(fake.Close)
	for _, base := range []string{fake.URL(), fake.URL() + "/", fake.URL() + "/v4"} {
		p, err := cloud.NewLinode(linodeToken, base, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.FindByLabel(t.Context(), "x"); err != nil {
			t.Errorf("base %q: %v", base, err)
		}
	}
	if _, err := cloud.NewLinode(linodeToken, "not a url", nil); err == nil {
		t.Error("a base URL without scheme and host was accepted")
	}
	if _, err := cloud.NewLinode("", "", nil); err == nil {
		t.Error("an empty token was accepted")
	}
}

// errorCase is one way a provider call can fail, and how the queue must read it.
type errorCase struct {
	name       string
	call       func(ctx context.Context, p cloud.Provider) error
	inject     func()
	ctx        func(t *testing.T) context.Context
	retryable  bool
	permanent  bool
	status     int
	retryAfter time.Duration
}

func checkError(t *testing.T, tc errorCase, p cloud.Provider, secrets ...string) {
	t.Helper()
	if tc.inject != nil {
		tc.inject()
	}
	ctx := t.Context()
	if tc.ctx != nil {
		ctx = tc.ctx(t)
	}
	start := time.Now()
	err := tc.call(ctx, p)
	if err == nil {
		t.Fatal("call succeeded, want an error")
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("call took %v", time.Since(start))
	}
	if got := cloud.IsRetryable(err); got != tc.retryable {
		t.Errorf("IsRetryable(%v) = %v, want %v", err, got, tc.retryable)
	}
	if got := cloud.IsPermanent(err); got != tc.permanent {
		t.Errorf("IsPermanent(%v) = %v, want %v", err, got, tc.permanent)
	}
	if got := cloud.RetryAfter(err); got != tc.retryAfter {
		t.Errorf("RetryAfter(%v) = %v, want %v", err, got, tc.retryAfter)
	}
	if tc.status != 0 {
		var ce *cloud.Error
		if !errors.As(err, &ce) || ce.Status != tc.status || ce.Provider != p.Name() {
			t.Errorf("error %#v, want a *cloud.Error from %s with status %d", err, p.Name(), tc.status)
		}
	}
	noSecrets(t, err, secrets...)
}

func create(req cloud.CreateRequest) func(context.Context, cloud.Provider) error {
	return func(ctx context.Context, p cloud.Provider) error {
		_, err := p.Create(ctx, req)
		return err
	}
}

func find(ctx context.Context, p cloud.Provider) error {
	_, _, err := p.FindByLabel(ctx, "hangar-order-1")
	return err
}

func cancelled(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}

func TestLinodeErrors(t *testing.T) {
	b := setupLinode(t, 300*time.Millisecond)
	seeded := b.fake.Seed("hangar-order-seeded", "ap-northeast", "g6-nanode-1")
	get := func(ctx context.Context, p cloud.Provider) error {
		_, err := p.Get(ctx, "40000001")
		return err
	}
	del := func(ctx context.Context, p cloud.Provider) error { return p.Delete(ctx, "40000001") }
	_ = seeded
	for _, tc := range []errorCase{
		{name: "500 on create", call: create(linodeReq("a1")), inject: func() { b.fake.FailNext(1, 500) }, retryable: true, status: 500},
		{name: "503 on find", call: find, inject: func() { b.fake.FailNext(1, 503) }, retryable: true, status: 503},
		{name: "502 on get", call: get, inject: func() { b.fake.FailNext(1, 502) }, retryable: true, status: 502},
		{name: "500 on delete", call: del, inject: func() { b.fake.FailNext(1, 500) }, retryable: true, status: 500},
		{name: "429 with Retry-After", call: create(linodeReq("a2")), inject: func() { b.fake.RateLimitNext(1, 7*time.Second) },
			retryable: true, status: 429, retryAfter: 7 * time.Second},
		{name: "invalid plan", call: create(cloud.CreateRequest{Label: "a3", Region: "ap-northeast", Plan: "g6-bogus-1", RootPassword: rootPass}),
			permanent: true, status: 400},
		{name: "invalid region", call: create(cloud.CreateRequest{Label: "a4", Region: "mars-1", Plan: "g6-nanode-1", RootPassword: rootPass}),
			permanent: true, status: 400},
		{name: "payment required", call: create(linodeReq("a5")), inject: func() { b.fake.FailNext(1, 402) }, permanent: true, status: 402},
		{name: "timeout on create", call: create(linodeReq("a6")), inject: func() { b.fake.HangNext(1) }, retryable: true},
		{name: "timeout on find", call: find, inject: func() { b.fake.HangNext(1) }, retryable: true},
		{name: "cancelled by caller", call: create(linodeReq("a7")), ctx: cancelled},
	} {
		t.Run(tc.name, func(t *testing.T) { checkError(t, tc, b.p, linodeToken, rootPass) })
	}
}

func TestLinodeUnauthorizedAndUnreachable(t *testing.T) {
	fake := linodefake.New(linodeToken)
	t.Cleanup(fake.Close)
	wrong, err := cloud.NewLinode("wrong-token-55", fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, errorCase{call: create(linodeReq("b1")), permanent: true, status: 401}, wrong, "wrong-token-55", rootPass)

	gone := linodefake.New(linodeToken)
	gone.Close()
	unreachable, err := cloud.NewLinode(linodeToken, gone.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkError(t, errorCase{call: create(linodeReq("b2")), retryable: true}, unreachable, linodeToken, rootPass)
}

// TestLinodeCreateThenTimeout is the failure the queue's idempotency exists for: the
// server is made but the answer is lost. The retry must find it, not make another.
func TestLinodeCreateThenTimeout(t *testing.T) {
	b := setupLinode(t, 300*time.Millisecond)
	b.fake.CreateThenHang(1)
	req := linodeReq("hangar-order-42")

	_, err := b.p.Create(t.Context(), req)
	if !cloud.IsRetryable(err) {
		t.Fatalf("create whose answer was lost = %v, want retryable", err)
	}
	noSecrets(t, err, linodeToken, rootPass)
	found, ok, err := b.p.FindByLabel(t.Context(), req.Label)
	if err != nil || !ok {
		t.Fatalf("FindByLabel after lost create = %v, %v", ok, err)
	}
	if b.fake.Count() != 1 {
		t.Fatalf("%d instances, want 1", b.fake.Count())
	}
	// A retry that skips the lookup still cannot make a second server: Linode refuses
	// the duplicate label and Create returns the existing one.
	again, err := b.p.Create(t.Context(), req)
	if err != nil || again.ID != found.ID {
		t.Fatalf("second Create = %+v, %v; want the instance %s", again, err, found.ID)
	}
	if b.fake.Count() != 1 {
		t.Fatalf("%d instances after a second Create, want 1", b.fake.Count())
	}
}

func TestLinodeSendsNoRetriesOfItsOwn(t *testing.T) {
	b := setupLinode(t, 5*time.Second)
	b.fake.FailNext(3, 503)
	if _, err := b.p.Create(t.Context(), linodeReq("c1")); !cloud.IsRetryable(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(b.fake.Requests()); n != 1 {
		t.Fatalf("%d requests for one call; the queue owns retries", n)
	}
}
