package linodefake_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
)

func client(t *testing.T, s *linodefake.Server, token string) *linodego.Client {
	t.Helper()
	c := linodego.NewClient(&http.Client{Timeout: 5 * time.Second})
	c.SetBaseURL(s.URL())
	c.SetToken(token)
	c.SetRetryCount(0)
	return &c
}

func TestPagesAndFilters(t *testing.T) {
	s := linodefake.New("tok", fakeapi.WithPageSize(2))
	defer s.Close()
	for _, seed := range [][3]string{
		{"a1", "us-east", "g6-nanode-1"}, {"a2", "us-east", "g6-nanode-1"}, {"a3", "us-east", "g6-nanode-1"},
		{"a4", "us-east", "g6-nanode-1"}, {"a5", "us-east", "g6-nanode-1"}, {"b1", "jp-osa", "g6-standard-1"},
	} {
		s.Seed(seed[0], seed[1], seed[2])
	}
	c := client(t, s, "tok")

	all, err := c.ListInstances(t.Context(), nil)
	if err != nil || len(all) != 6 {
		t.Fatalf("all pages = %d instances, %v", len(all), err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("6 instances in pages of 2 took %d requests", n)
	}
	for _, tc := range []struct {
		filter string
		want   int
		status int // non-zero: the request fails with this
	}{
		{filter: `{"label":"a3"}`, want: 1},
		{filter: `{"region":"jp-osa"}`, want: 1},
		{filter: `{"type":"g6-nanode-1"}`, want: 5},
		{filter: `{"label":"zz"}`, want: 0},
		{filter: `{"ipv4":"1.2.3.4"}`, status: 400},
	} {
		got, err := c.ListInstances(t.Context(), linodego.NewListOptions(0, tc.filter))
		if tc.status != 0 {
			if !linodego.ErrHasStatus(err, tc.status) {
				t.Errorf("filter %s = %v, want %d", tc.filter, err, tc.status)
			}
			continue
		}
		if err != nil || len(got) != tc.want {
			t.Errorf("filter %s = %d instances, %v; want %d", tc.filter, len(got), err, tc.want)
		}
	}
}

// The errors are checked as linodego reads them, since hangar's Linode provider sees
// nothing else: the status and the reason from Linode's {"errors": [...]} body.
func TestErrors(t *testing.T) {
	create := func(label, region, plan string) func(c *linodego.Client) error {
		return func(c *linodego.Client) error {
			_, err := c.CreateInstance(t.Context(), linodego.InstanceCreateOptions{
				Label: label, Region: region, Type: plan, Image: "linode/debian12", RootPass: "pw-123456789"})
			return err
		}
	}
	list := func(c *linodego.Client) error { _, err := c.ListInstances(t.Context(), nil); return err }
	for _, tc := range []struct {
		name   string
		inject func(s *linodefake.Server)
		call   func(c *linodego.Client) error
		status int
		reason string
	}{
		{name: "unknown instance", call: func(c *linodego.Client) error {
			_, err := c.GetInstance(t.Context(), 1)
			return err
		}, status: 404, reason: "Not found"},
		{name: "unknown region", call: create("web-1", "mars-1", "g6-nanode-1"), status: 400, reason: "region is not valid"},
		{name: "unknown plan", call: create("web-1", "us-east", "g6-bogus"), status: 400, reason: "A valid plan type"},
		{name: "label too short", call: create("w", "us-east", "g6-nanode-1"), status: 400, reason: "Length must be 3-64"},
		{name: "label taken", inject: func(s *linodefake.Server) { s.Seed("web-1", "us-east", "g6-nanode-1") },
			call: create("web-1", "us-east", "g6-nanode-1"), status: 400, reason: "Label must be unique"},
		{name: "injected outage", inject: func(s *linodefake.Server) { s.FailNext(1, 503) },
			call: list, status: 503, reason: "Service unavailable"},
		{name: "injected rate limit", inject: func(s *linodefake.Server) { s.RateLimitNext(1, time.Second) },
			call: list, status: 429, reason: "Too many requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := linodefake.New("tok")
			defer s.Close()
			if tc.inject != nil {
				tc.inject(s)
			}
			err := tc.call(client(t, s, "tok"))
			if !linodego.ErrHasStatus(err, tc.status) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("got %v, want %d with %q", err, tc.status, tc.reason)
			}
		})
	}
}

func TestWrongToken(t *testing.T) {
	s := linodefake.New("tok")
	defer s.Close()
	_, err := client(t, s, "nope").ListInstances(t.Context(), nil)
	if !linodego.ErrHasStatus(err, 401) || !strings.Contains(err.Error(), "Invalid Token") {
		t.Errorf("wrong token = %v, want 401 Invalid Token", err)
	}
}

func TestCreateAndDelete(t *testing.T) {
	s := linodefake.New("tok")
	defer s.Close()
	c := client(t, s, "tok")
	go func() {
		_, _ = c.CreateInstance(context.Background(), linodego.InstanceCreateOptions{
			Label: "web-1", Region: "us-east", Type: "g6-nanode-1", Image: "linode/debian12", RootPass: "pw-123456789"})
	}()
	if !s.Wait(5*time.Second, func() bool { return s.Count() == 1 }) {
		t.Fatal("create never arrived")
	}
	if p, ok := s.RootPass("web-1"); !ok || p != "pw-123456789" {
		t.Errorf("RootPass = %q, %v", p, ok)
	}
	in := s.Instances()[0]
	got, err := c.GetInstance(t.Context(), in.ID)
	if err != nil || got.Label != "web-1" || got.Status != linodego.InstanceRunning || len(got.IPv4) != 1 {
		t.Fatalf("GetInstance = %+v, %v", got, err)
	}
	if err := c.DeleteInstance(t.Context(), in.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.RootPass("web-1"); ok || s.Count() != 0 {
		t.Errorf("after delete: %d instances, root_pass kept %v", s.Count(), ok)
	}
}

// Linode answers a create "provisioning" whatever the boot delay, and reads "running"
// only once the delay has passed.
func TestStatusDuringBoot(t *testing.T) {
	for _, tc := range []struct {
		boot time.Duration
		want linodego.InstanceStatus
	}{
		{boot: 0, want: linodego.InstanceRunning},
		{boot: time.Hour, want: linodego.InstanceProvisioning},
	} {
		s := linodefake.New("tok", fakeapi.WithBootDelay(tc.boot))
		c := client(t, s, "tok")
		created, err := c.CreateInstance(t.Context(), linodego.InstanceCreateOptions{
			Label: "web-1", Region: "us-east", Type: "g6-nanode-1", Image: "linode/debian12", RootPass: "pw-123456789"})
		if err != nil || created.Status != linodego.InstanceProvisioning {
			t.Fatalf("boot %v: create = %+v, %v", tc.boot, created, err)
		}
		got, err := c.GetInstance(t.Context(), created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.want {
			t.Errorf("boot %v: status %v, want %v", tc.boot, got.Status, tc.want)
		}
		s.Close()
	}
}
