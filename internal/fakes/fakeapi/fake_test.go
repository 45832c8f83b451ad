package fakeapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
)

const secret = "s3cret"

var testErrors = fakeapi.Errors{
	Write: func(w http.ResponseWriter, status int, msg string) {
		fakeapi.WriteJSON(w, status, map[string]string{"msg": msg})
	},
	Unauthorized: "who are you",
	NotFound:     "no such path",
	Reasons:      map[int]string{http.StatusTooManyRequests: "slow down", http.StatusServiceUnavailable: "down"},
	ServerError:  "broken",
}

type testFake struct {
	*fakeapi.Fake[string, string, thing]
}

// startFake is the least a provider does with a Fake: one create route that stores a
// thing (and may hang after, as CreateThenHang asks), and one that reads the store.
func startFake(t *testing.T, opts ...fakeapi.Option) testFake {
	t.Helper()
	f := testFake{fakeapi.NewFake(fakeapi.Spec[string, thing]{
		Secret:   secret,
		Record:   func(r *http.Request) string { return r.Method + " " + r.URL.Path },
		Errors:   testErrors,
		Plans:    []string{"p1"},
		Regions:  []string{"r1"},
		PageSize: 10,
		Seed: func(label, region, _ string, created time.Time) func(int) thing {
			return func(seq int) thing {
				return thing{ID: fmt.Sprintf("t%03d", seq), Label: label, Tags: []string{region}, Created: created}
			}
		},
	}, newStore(), opts...)}
	f.Serve(map[string]http.HandlerFunc{
		"POST /things": func(w http.ResponseWriter, r *http.Request) {
			in, _ := f.Store.Add(r.URL.Query().Get("secret"), nil, build(r.URL.Query().Get("label")))
			if f.TakeCreateHang() {
				f.Hang(r)
			}
			fakeapi.WriteJSON(w, http.StatusCreated, in)
		},
		"GET /things": func(w http.ResponseWriter, _ *http.Request) {
			fakeapi.WriteJSON(w, http.StatusOK, f.Instances())
		},
	})
	t.Cleanup(f.Close)
	return f
}

type answer struct {
	status     int
	msg        string
	retryAfter string
}

func call(t *testing.T, f testFake, method, path, token string) (answer, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, f.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	var body struct{ Msg string }
	_ = json.NewDecoder(res.Body).Decode(&body)
	return answer{status: res.StatusCode, msg: body.Msg, retryAfter: res.Header.Get("Retry-After")}, nil
}

func TestNewFakeSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []fakeapi.Option
		plans    []string
		regions  []string
		pageSize int
		boot     time.Duration
	}{
		{name: "defaults", plans: []string{"p1"}, regions: []string{"r1"}, pageSize: 10},
		{name: "options add to the defaults",
			opts:  []fakeapi.Option{fakeapi.WithPlans("p2", "p3"), fakeapi.WithRegions("r2")},
			plans: []string{"p1", "p2", "p3"}, regions: []string{"r1", "r2"}, pageSize: 10},
		{name: "page size and boot delay",
			opts:  []fakeapi.Option{fakeapi.WithPageSize(3), fakeapi.WithBootDelay(time.Hour)},
			plans: []string{"p1"}, regions: []string{"r1"}, pageSize: 3, boot: time.Hour},
		{name: "a page size below one is one",
			opts:  []fakeapi.Option{fakeapi.WithPageSize(0)},
			plans: []string{"p1"}, regions: []string{"r1"}, pageSize: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := startFake(t, tc.opts...).Settings
			if p := slices.Sorted(maps.Keys(got.Plans)); !slices.Equal(p, tc.plans) {
				t.Errorf("plans %v, want %v", p, tc.plans)
			}
			if r := slices.Sorted(maps.Keys(got.Regions)); !slices.Equal(r, tc.regions) {
				t.Errorf("regions %v, want %v", r, tc.regions)
			}
			if got.PageSize != tc.pageSize || got.BootDelay != tc.boot {
				t.Errorf("page size %d, boot delay %v; want %d, %v", got.PageSize, got.BootDelay, tc.pageSize, tc.boot)
			}
		})
	}
}

func TestBooting(t *testing.T) {
	s := fakeapi.Settings{BootDelay: time.Minute}
	for _, tc := range []struct {
		created time.Time
		want    bool
	}{
		{time.Now(), true},
		{time.Now().Add(-59 * time.Second), true},
		{time.Now().Add(-61 * time.Second), false},
	} {
		if got := s.Booting(tc.created); got != tc.want {
			t.Errorf("Booting(%v ago) = %v", time.Since(tc.created).Round(time.Second), got)
		}
	}
	if (fakeapi.Settings{}).Booting(time.Now()) {
		t.Error("with no boot delay an instance booted")
	}
}

func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject func(f testFake)
		method string
		path   string
		token  string
		want   answer
	}{
		{name: "served", method: "GET", path: "/things", token: secret, want: answer{status: 200}},
		{name: "no token", method: "GET", path: "/things", want: answer{status: 401, msg: "who are you"}},
		{name: "wrong token", method: "GET", path: "/things", token: "nope", want: answer{status: 401, msg: "who are you"}},
		{name: "unknown path", method: "GET", path: "/nothing", token: secret, want: answer{status: 404, msg: "no such path"}},
		{name: "wrong method", method: "DELETE", path: "/things", token: secret, want: answer{status: 404, msg: "no such path"}},
		{name: "injected named status", inject: func(f testFake) { f.FailNext(1, 503) },
			method: "GET", path: "/things", token: secret, want: answer{status: 503, msg: "down"}},
		{name: "injected other 5xx", inject: func(f testFake) { f.FailNext(1, 502) },
			method: "GET", path: "/things", token: secret, want: answer{status: 502, msg: "broken"}},
		{name: "injected 4xx", inject: func(f testFake) { f.FailNext(1, 402) },
			method: "GET", path: "/things", token: secret, want: answer{status: 402, msg: "Payment Required"}},
		{name: "faults come before the token check", inject: func(f testFake) { f.FailNext(1, 503) },
			method: "GET", path: "/things", token: "nope", want: answer{status: 503, msg: "down"}},
		{name: "rate limit rounds Retry-After up", inject: func(f testFake) { f.RateLimitNext(1, 1500*time.Millisecond) },
			method: "GET", path: "/things", token: secret, want: answer{status: 429, msg: "slow down", retryAfter: "2"}},
		{name: "rate limit without a wait", inject: func(f testFake) { f.RateLimitNext(1, 0) },
			method: "GET", path: "/things", token: secret, want: answer{status: 429, msg: "slow down"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t)
			if tc.inject != nil {
				tc.inject(f)
			}
			got, err := call(t, f, tc.method, tc.path, tc.token)
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if _, err := call(t, f, "GET", "/things", secret); err != nil {
				t.Errorf("the request after: %v", err)
			}
			want := []string{tc.method + " " + tc.path, "GET /things"}
			if got := f.Requests(); !slices.Equal(got, want) {
				t.Errorf("recorded %v, want %v", got, want)
			}
		})
	}
}

func TestFailNextCounts(t *testing.T) {
	f := startFake(t)
	f.FailNext(2, 500)
	var statuses []int
	for range 3 {
		a, err := call(t, f, "GET", "/things", secret)
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, a.status)
	}
	if !slices.Equal(statuses, []int{500, 500, 200}) {
		t.Errorf("statuses %v, want two failures then success", statuses)
	}
}

func TestLatency(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(f testFake)
		opts []fakeapi.Option
		min  time.Duration
	}{
		{name: "option", opts: []fakeapi.Option{fakeapi.WithLatency(100 * time.Millisecond)}, min: 100 * time.Millisecond},
		{name: "SetLatency", set: func(f testFake) { f.SetLatency(100 * time.Millisecond) }, min: 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, tc.opts...)
			if tc.set != nil {
				tc.set(f)
			}
			start := time.Now()
			if _, err := call(t, f, "GET", "/things", secret); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < tc.min {
				t.Errorf("answered after %v, want at least %v", d, tc.min)
			}
		})
	}
}

// A hanging request is a timeout to the client: it must never get an answer, and Close
// must let it go rather than wait for it.
func TestHangs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		inject    func(f testFake)
		latency   time.Duration
		wantCount int // instances stored by the hung request
	}{
		{name: "HangNext", inject: func(f testFake) { f.HangNext(1) }},
		{name: "CreateThenHang", inject: func(f testFake) { f.CreateThenHang(1) }, wantCount: 1},
		{name: "latency", latency: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFake(t, fakeapi.WithLatency(tc.latency))
			if tc.inject != nil {
				tc.inject(f)
			}
			done := make(chan error, 1)
			go func() {
				_, err := call(t, f, "POST", "/things?label=a", secret)
				done <- err
			}()
			if !f.Wait(5*time.Second, func() bool { return len(f.Requests()) == 1 && f.Count() == tc.wantCount }) {
				t.Fatalf("request never arrived (%d requests, %d instances)", len(f.Requests()), f.Count())
			}
			select {
			case err := <-done:
				t.Fatalf("a hanging request returned early: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			f.Close()
			select {
			case err := <-done:
				if err == nil {
					t.Error("a hung request got an answer")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Close left the request hanging")
			}
		})
	}
}

func TestCreateThenHangOnlyOnce(t *testing.T) {
	f := startFake(t)
	f.CreateThenHang(1)
	if !f.TakeCreateHang() {
		t.Fatal("CreateThenHang(1) gave no hang to take")
	}
	if f.TakeCreateHang() {
		t.Fatal("CreateThenHang(1) gave two")
	}
	if a, err := call(t, f, "POST", "/things?label=a", secret); err != nil || a.status != 201 {
		t.Errorf("create after the hang was used up = %+v, %v", a, err)
	}
}

func TestWaitWakesOnChanges(t *testing.T) {
	f := startFake(t)
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.Store.Add("", nil, build("a"))
	}()
	if !f.Wait(5*time.Second, func() bool { return f.Count() == 1 }) {
		t.Fatal("Wait missed an add")
	}
	if f.Wait(30*time.Millisecond, func() bool { return f.Count() == 2 }) {
		t.Fatal("Wait reported a condition that never held")
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.Store.Remove("t001")
	}()
	if !f.Wait(5*time.Second, func() bool { return f.Count() == 0 }) {
		t.Fatal("Wait missed a remove")
	}
}

// A seeded instance stands for one made before the test began: already booted, and
// with no secret, since hangar never chose one for it.
func TestSeed(t *testing.T) {
	for _, boot := range []time.Duration{0, time.Minute, time.Hour} {
		f := startFake(t, fakeapi.WithBootDelay(boot))
		a := f.Seed("a", "r1", "p1")
		b := f.Seed("a", "r1", "p1")
		if a.ID != "t001" || b.ID != "t002" || a.Tags[0] != "r1" {
			t.Errorf("seeded %+v, %+v", a, b)
		}
		if f.Settings.Booting(a.Created) {
			t.Errorf("boot delay %v: a seeded instance is still booting", boot)
		}
		if _, ok := f.Store.Secret("a"); ok || f.Count() != 2 {
			t.Errorf("boot delay %v: %d instances, secret kept %v", boot, f.Count(), ok)
		}
	}
}

func TestSecretReachesStore(t *testing.T) {
	f := startFake(t)
	if _, err := call(t, f, "POST", "/things?label=a&secret=pw", secret); err != nil {
		t.Fatal(err)
	}
	if got, ok := f.Store.Secret("a"); !ok || got != "pw" {
		t.Errorf("Secret = %q, %v", got, ok)
	}
}

func TestReason(t *testing.T) {
	for status, want := range map[int]string{
		429: "slow down", 503: "down", 500: "broken", 504: "broken", 402: "Payment Required", 403: "Forbidden",
	} {
		if got := testErrors.Reason(status); got != want {
			t.Errorf("Reason(%d) = %q, want %q", status, got, want)
		}
	}
}
