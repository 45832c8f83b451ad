package vultrfake_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vultr/govultr/v3"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
)

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

func client(t *testing.T, s *vultrfake.Server, key string) *govultr.Client {
	t.Helper()
	c := govultr.NewClient(&http.Client{Timeout: 5 * time.Second, Transport: bearer(key)})
	if err := c.SetBaseURL(s.URL()); err != nil {
		t.Fatal(err)
	}
	c.SetRetryLimit(0)
	return c
}

func TestCursorPagesAndFilters(t *testing.T) {
	s := vultrfake.New("key", fakeapi.WithPageSize(2))
	defer s.Close()
	for _, label := range []string{"a1", "a2", "a3", "a4", "a5"} {
		s.Seed(label, "icn", "vc2-1c-1gb")
	}
	s.Seed("b1", "nrt", "vc2-1c-1gb")
	c := client(t, s, "key")

	var seen []string
	opts := &govultr.ListOptions{}
	for {
		list, meta, _, err := c.Instance.List(t.Context(), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range list {
			seen = append(seen, in.Label)
		}
		if meta.Total != 6 {
			t.Errorf("meta.total = %d", meta.Total)
		}
		if meta.Links.Next == "" {
			break
		}
		opts.Cursor = meta.Links.Next
	}
	if strings.Join(seen, " ") != "a1 a2 a3 a4 a5 b1" {
		t.Fatalf("walked %v, want oldest first", seen)
	}
	for _, tc := range []struct {
		opts govultr.ListOptions
		want int
	}{
		{govultr.ListOptions{Label: "a3"}, 1},
		{govultr.ListOptions{Region: "nrt"}, 1},
		{govultr.ListOptions{Tag: "hangar", PerPage: 100}, 6},
		{govultr.ListOptions{Label: "zz"}, 0},
	} {
		list, _, _, err := c.Instance.List(t.Context(), &tc.opts)
		if err != nil || len(list) != tc.want {
			t.Errorf("List(%+v) = %d, %v; want %d", tc.opts, len(list), err, tc.want)
		}
	}
	for _, bad := range []govultr.ListOptions{{PerPage: 501}, {Cursor: "!!"}} {
		if _, _, _, err := c.Instance.List(t.Context(), &bad); err == nil {
			t.Errorf("List(%+v) was accepted", bad)
		}
	}
}

// The errors are checked as govultr reads them, since hangar's Vultr provider sees
// nothing else: the "error" text of Vultr's {"error", "status"} body.
func TestErrors(t *testing.T) {
	create := func(region, plan string, osID int) func(c *govultr.Client) error {
		return func(c *govultr.Client) error {
			_, _, err := c.Instance.Create(t.Context(), &govultr.InstanceCreateReq{Label: "w1", Region: region, Plan: plan, OsID: osID})
			return err
		}
	}
	list := func(c *govultr.Client) error { _, _, _, err := c.Instance.List(t.Context(), nil); return err }
	for _, tc := range []struct {
		name   string
		inject func(s *vultrfake.Server)
		call   func(c *govultr.Client) error
		want   string
	}{
		{name: "unknown instance", call: func(c *govultr.Client) error {
			_, _, err := c.Instance.Get(t.Context(), "cb676a46-0000")
			return err
		}, want: "Invalid instance-id."},
		{name: "unknown region", call: create("mars", "vc2-1c-1gb", 2136), want: "Invalid region chosen."},
		{name: "unknown plan", call: create("icn", "vc2-bogus", 2136), want: "Invalid plan chosen."},
		{name: "unknown os", call: create("icn", "vc2-1c-1gb", 9), want: "Invalid operating system."},
		{name: "injected outage", inject: func(s *vultrfake.Server) { s.FailNext(1, 500) },
			call: list, want: "An internal error occurred."},
		{name: "injected rate limit", inject: func(s *vultrfake.Server) { s.RateLimitNext(1, time.Second) },
			call: list, want: "Rate limit reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := vultrfake.New("key")
			defer s.Close()
			if tc.inject != nil {
				tc.inject(s)
			}
			if err := tc.call(client(t, s, "key")); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWrongKey(t *testing.T) {
	s := vultrfake.New("key")
	defer s.Close()
	if _, _, _, err := client(t, s, "nope").Instance.List(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "Invalid API token.") {
		t.Errorf("wrong key = %v, want Invalid API token.", err)
	}
}

func TestCreateAndDelete(t *testing.T) {
	s := vultrfake.New("key")
	defer s.Close()
	c := client(t, s, "key")
	got := make(chan *govultr.Instance, 1)
	go func() {
		in, _, _ := c.Instance.Create(context.Background(),
			&govultr.InstanceCreateReq{Label: "w1", Region: "icn", Plan: "vc2-1c-1gb", OsID: 2136})
		got <- in
	}()
	if !s.Wait(5*time.Second, func() bool { return s.Count() == 1 }) {
		t.Fatal("create never arrived")
	}
	in := <-got
	if p, ok := s.Password("w1"); !ok || in == nil || in.DefaultPassword != p || in.MainIP != "0.0.0.0" {
		t.Fatalf("create answered %+v; fake holds password %q", in, p)
	}
	if err := c.Instance.Delete(t.Context(), in.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Password("w1"); ok || s.Count() != 0 {
		t.Errorf("after delete: %d instances, password kept %v", s.Count(), ok)
	}
	// Labels are not unique at Vultr: each create with one is another instance.
	for range 2 {
		if _, _, err := c.Instance.Create(t.Context(),
			&govultr.InstanceCreateReq{Label: "w2", Region: "icn", Plan: "vc2-1c-1gb", OsID: 2136}); err != nil {
			t.Fatal(err)
		}
	}
	if s.Count() != 2 {
		t.Errorf("two creates with one label made %d instances", s.Count())
	}
}
