package fakeapi

import (
	"cmp"
	"net/http"
	"net/http/httptest"
	"time"
)

// Spec is what a provider tells NewFake about itself; R is its record of a request and
// I its instance.
type Spec[R, I any] struct {
	// Secret is the API token or key every request must carry as "Bearer <Secret>".
	Secret string
	// Record is the provider's record of a request (see Base).
	Record func(*http.Request) R
	Errors Errors
	// Plans, Regions and PageSize are the provider's defaults, before options.
	Plans, Regions []string
	PageSize       int
	// Seed builds the instance Fake.Seed adds: the provider's usual image and tags for
	// an instance hangar did not create.
	Seed func(label, region, plan string, created time.Time) func(seq int) I
}

// Fake is the part of a fake API server that does not depend on the provider: the
// server itself, its token check, its settings, faults and request log (Base), and its
// instances (Store). A provider embeds a *Fake and adds its routes with Serve.
type Fake[R any, K cmp.Ordered, I any] struct {
	*httptest.Server
	*Base[R]
	Store    *Store[K, I]
	Settings Settings

	secret string
	errors Errors
	seed   func(label, region, plan string, created time.Time) func(seq int) I
}

// NewFake sets a fake up without serving yet: the provider's handlers need the Fake
// before Serve can route to them.
func NewFake[R any, K cmp.Ordered, I any](spec Spec[R, I], store *Store[K, I], opts ...Option) *Fake[R, K, I] {
	set := Settings{Plans: map[string]bool{}, Regions: map[string]bool{}, PageSize: max(spec.PageSize, 1)}
	addAll(set.Plans, spec.Plans)
	addAll(set.Regions, spec.Regions)
	for _, o := range opts {
		o(&set)
	}
	base := New(spec.Record)
	base.SetLatency(set.Latency)
	store.changed = base.Notify
	return &Fake[R, K, I]{
		Base: base, Store: store, Settings: set,
		secret: spec.Secret, errors: spec.Errors, seed: spec.Seed,
	}
}

// Serve starts the server. routes maps ServeMux patterns to the provider's handlers;
// every request first passes Front and then the token check, and a path no route
// matches gets Errors.NotFound, as the real APIs answer with their own 404 body.
func (f *Fake[R, K, I]) Serve(routes map[string]http.HandlerFunc) {
	mux := http.NewServeMux()
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		f.errors.Write(w, http.StatusNotFound, f.errors.NotFound)
	})
	f.Server = httptest.NewServer(f.Front(f.authorized(mux), f.errors.Fail))
}

// authorized comes after Front so that a request with a wrong token is still recorded
// and still meets injected faults, as a client retrying into an outage would.
func (f *Fake[R, K, I]) authorized(next http.Handler) http.Handler {
	want := "Bearer " + f.secret
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			f.errors.Write(w, http.StatusUnauthorized, f.errors.Unauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// URL is the base URL to give the client (hangar's --linode-api or --vultr-api).
func (f *Fake[R, K, I]) URL() string { return f.Server.URL }

// Close releases hanging and delayed requests first: the server's Close waits for
// every handler, and these would otherwise never return.
func (f *Fake[R, K, I]) Close() {
	f.Release()
	f.Server.Close()
}

// Instances returns a copy of the instances, in id order.
func (f *Fake[R, K, I]) Instances() []I { return f.Store.Select(nil) }

// Seed adds an instance as if created before the boot delay, so that it already reads
// as running, and returns it. It keeps no secret: the test made the instance, not hangar.
func (f *Fake[R, K, I]) Seed(label, region, plan string) I {
	in, _ := f.Store.Add("", nil, f.seed(label, region, plan, time.Now().Add(-f.Settings.BootDelay-time.Second)))
	return in
}

// Count is how many instances exist.
func (f *Fake[R, K, I]) Count() int { return f.Store.Count() }
