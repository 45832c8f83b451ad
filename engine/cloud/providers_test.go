package cloud_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
)

const rootPass = `Root"Pass\w0rd-9xQ`

// fakeCloud is what the shared scenarios need of a provider's fake; linodefake and
// vultrfake differ only in their instance and request types, which adapters hide.
type fakeCloud interface {
	URL() string
	Close()
	FailNext(n, status int)
	RateLimitNext(n int, retryAfter time.Duration)
	HangNext(n int)
	CreateThenHang(n int)
	Count() int
	requests() int
	seed(label string) (id string)
}

// providerCase is one real provider on its fake, for the scenarios every provider
// must pass the same way: the queue reads their errors alike.
type providerCase struct {
	name   string
	secret string // the API token or key, which no error may show
	// open makes the provider for an API at url; timeout 0 leaves the client's default.
	open      func(secret, url string, timeout time.Duration) (cloud.Provider, error)
	newFake   func() fakeCloud
	req       func(label string) cloud.CreateRequest
	badPlan   cloud.CreateRequest
	badRegion cloud.CreateRequest
	// uniqueLabels: the provider itself refuses a second server with a label, so even
	// a create that skips the lookup cannot make a duplicate.
	uniqueLabels bool
}

func providerCases() []providerCase { return []providerCase{linodeCase(), vultrCase()} }

func (pc providerCase) start(t *testing.T, timeout time.Duration) (cloud.Provider, fakeCloud) {
	t.Helper()
	fake := pc.newFake()
	t.Cleanup(fake.Close)
	p, err := pc.open(pc.secret, fake.URL(), timeout)
	if err != nil {
		t.Fatal(err)
	}
	return p, fake
}

// httpClient gives up after timeout; 0 leaves the provider its default client.
func httpClient(timeout time.Duration) *http.Client {
	if timeout == 0 {
		return nil
	}
	return &http.Client{Timeout: timeout}
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

// checkFound checks what every provider must do with a server it has created: find
// it by label, read it ready, and delete it, twice without complaint.
func checkFound(t *testing.T, p cloud.Provider, fake fakeCloud, in cloud.Instance) {
	t.Helper()
	ctx := t.Context()
	found, ok, err := p.FindByLabel(ctx, in.Label)
	if err != nil || !ok || found.ID != in.ID || found.RootPassword != "" {
		t.Fatalf("FindByLabel = %+v, %v, %v", found, ok, err)
	}
	if _, ok, err := p.FindByLabel(ctx, in.Label+"-unknown"); err != nil || ok {
		t.Fatalf("FindByLabel of an unknown label = %v, %v", ok, err)
	}
	got, err := p.Get(ctx, in.ID)
	if err != nil || got.ID != in.ID || !got.Ready() || (in.IPv4 != "" && got.IPv4 != in.IPv4) {
		t.Fatalf("Get = %+v, %v", got, err)
	}

	if err := p.Delete(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if fake.Count() != 0 {
		t.Fatal("instance still exists after Delete")
	}
	if err := p.Delete(ctx, in.ID); err != nil {
		t.Errorf("deleting a missing instance = %v, want nil", err)
	}
	_, err = p.Get(ctx, in.ID)
	if !cloud.IsNotFound(err) || !cloud.IsPermanent(err) {
		t.Errorf("Get after Delete = %v, want a permanent not-found", err)
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

func TestProviderErrors(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			p, fake := pc.start(t, 300*time.Millisecond)
			id := fake.seed("hangar-order-seeded")
			get := func(ctx context.Context, p cloud.Provider) error {
				_, err := p.Get(ctx, id)
				return err
			}
			del := func(ctx context.Context, p cloud.Provider) error { return p.Delete(ctx, id) }
			for _, tc := range []errorCase{
				{name: "500 on create", call: create(pc.req("a1")), inject: func() { fake.FailNext(1, 500) }, retryable: true, status: 500},
				{name: "503 on find", call: find, inject: func() { fake.FailNext(1, 503) }, retryable: true, status: 503},
				{name: "502 on get", call: get, inject: func() { fake.FailNext(1, 502) }, retryable: true, status: 502},
				{name: "500 on delete", call: del, inject: func() { fake.FailNext(1, 500) }, retryable: true, status: 500},
				{name: "429 with Retry-After", call: create(pc.req("a2")), inject: func() { fake.RateLimitNext(1, 7*time.Second) },
					retryable: true, status: 429, retryAfter: 7 * time.Second},
				{name: "invalid plan", call: create(pc.badPlan), permanent: true, status: 400},
				{name: "invalid region", call: create(pc.badRegion), permanent: true, status: 400},
				{name: "payment required", call: create(pc.req("a5")), inject: func() { fake.FailNext(1, 402) }, permanent: true, status: 402},
				{name: "timeout on create", call: create(pc.req("a6")), inject: func() { fake.HangNext(1) }, retryable: true},
				{name: "timeout on find", call: find, inject: func() { fake.HangNext(1) }, retryable: true},
				{name: "timeout on get", call: get, inject: func() { fake.HangNext(1) }, retryable: true},
				{name: "cancelled by caller", call: create(pc.req("a7")), ctx: cancelled},
			} {
				t.Run(tc.name, func(t *testing.T) { checkError(t, tc, p, pc.secret, rootPass) })
			}
		})
	}
}

func TestProviderUnauthorizedAndUnreachable(t *testing.T) {
	const wrongSecret = "WRONG-secret-0042"
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			fake := pc.newFake()
			t.Cleanup(fake.Close)
			wrong, err := pc.open(wrongSecret, fake.URL(), 0)
			if err != nil {
				t.Fatal(err)
			}
			checkError(t, errorCase{call: create(pc.req("b1")), permanent: true, status: 401}, wrong, wrongSecret, rootPass)

			gone := pc.newFake()
			gone.Close()
			unreachable, err := pc.open(pc.secret, gone.URL(), 0)
			if err != nil {
				t.Fatal(err)
			}
			checkError(t, errorCase{call: create(pc.req("b2")), retryable: true}, unreachable, pc.secret, rootPass)
		})
	}
}

// TestProviderCreateThenTimeout is the failure the queue's idempotency exists for:
// the server is made but the answer is lost. The retry must find it, not make another.
func TestProviderCreateThenTimeout(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			p, fake := pc.start(t, 300*time.Millisecond)
			fake.CreateThenHang(1)
			req := pc.req("hangar-order-42")

			_, err := p.Create(t.Context(), req)
			if !cloud.IsRetryable(err) {
				t.Fatalf("create whose answer was lost = %v, want retryable", err)
			}
			noSecrets(t, err, pc.secret, rootPass)
			found, ok, err := p.FindByLabel(t.Context(), req.Label)
			if err != nil || !ok || found.Label != req.Label {
				t.Fatalf("FindByLabel after lost create = %+v, %v, %v", found, ok, err)
			}
			if fake.Count() != 1 {
				t.Fatalf("%d instances, want exactly 1", fake.Count())
			}
			if !pc.uniqueLabels {
				return
			}
			again, err := p.Create(t.Context(), req)
			if err != nil || again.ID != found.ID {
				t.Fatalf("second Create = %+v, %v; want the instance %s", again, err, found.ID)
			}
			if fake.Count() != 1 {
				t.Fatalf("%d instances after a second Create, want 1", fake.Count())
			}
		})
	}
}

func TestProviderSendsNoRetriesOfItsOwn(t *testing.T) {
	for _, pc := range providerCases() {
		t.Run(pc.name, func(t *testing.T) {
			p, fake := pc.start(t, 5*time.Second)
			fake.FailNext(3, 503)
			if _, err := p.Create(t.Context(), pc.req("c1")); !cloud.IsRetryable(err) {
				t.Fatalf("err = %v", err)
			}
			if n := fake.requests(); n != 1 {
				t.Fatalf("%d requests for one call; the queue owns retries", n)
			}
		})
	}
}
