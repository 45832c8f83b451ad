package vultrfake_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/vultr/govultr/v3"

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
	s := vultrfake.New("key", vultrfake.WithPageSize(2))
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
	if len(seen) != 6 || seen[0] != "a1" || seen[5] != "b1" {
		t.Fatalf("walked %v", seen)
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
}

func TestKeyAndWait(t *testing.T) {
	s := vultrfake.New("key")
	defer s.Close()
	if _, _, _, err := client(t, s, "nope").Instance.List(t.Context(), nil); err == nil {
		t.Fatal("wrong key accepted")
	}
	got := make(chan *govultr.Instance, 1)
	go func() {
		in, _, _ := client(t, s, "key").Instance.Create(context.Background(),
			&govultr.InstanceCreateReq{Label: "w1", Region: "icn", Plan: "vc2-1c-1gb", OsID: 2136})
		got <- in
	}()
	if !s.Wait(5*time.Second, func() bool { return s.Count() == 1 }) {
		t.Fatal("create never arrived")
	}
	in := <-got
	if p, ok := s.Password("w1"); !ok || in == nil || in.DefaultPassword != p {
		t.Errorf("create answered %+v; fake holds password %q", in, p)
	}
}
