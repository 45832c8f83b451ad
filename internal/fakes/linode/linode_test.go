package linodefake_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/linode/linodego"

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
	s := linodefake.New("tok", linodefake.WithPageSize(2))
	defer s.Close()
	for _, label := range []string{"a1", "a2", "a3", "a4", "a5"} {
		s.Seed(label, "us-east", "g6-nanode-1")
	}
	s.Seed("b1", "jp-osa", "g6-standard-1")
	c := client(t, s, "tok")

	all, err := c.ListInstances(t.Context(), nil)
	if err != nil || len(all) != 6 {
		t.Fatalf("all pages = %d instances, %v", len(all), err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("6 instances in pages of 2 took %d requests", n)
	}
	for filter, want := range map[string]int{`{"label":"a3"}`: 1, `{"region":"jp-osa"}`: 1, `{"type":"g6-nanode-1"}`: 5, `{"label":"zz"}`: 0} {
		got, err := c.ListInstances(t.Context(), linodego.NewListOptions(0, filter))
		if err != nil || len(got) != want {
			t.Errorf("filter %s = %d instances, %v; want %d", filter, len(got), err, want)
		}
	}
	if _, err := c.ListInstances(t.Context(), linodego.NewListOptions(0, `{"ipv4":"1.2.3.4"}`)); !linodego.ErrHasStatus(err, 400) {
		t.Errorf("unsupported filter = %v, want 400", err)
	}
}

func TestTokenAndWait(t *testing.T) {
	s := linodefake.New("tok")
	defer s.Close()
	if _, err := client(t, s, "nope").ListInstances(t.Context(), nil); !linodego.ErrHasStatus(err, 401) {
		t.Fatalf("wrong token = %v, want 401", err)
	}
	go func() {
		_, _ = client(t, s, "tok").CreateInstance(context.Background(), linodego.InstanceCreateOptions{
			Label: "web-1", Region: "us-east", Type: "g6-nanode-1", Image: "linode/debian12", RootPass: "pw-123456789"})
	}()
	if !s.Wait(5*time.Second, func() bool { return s.Count() == 1 }) {
		t.Fatal("create never arrived")
	}
	if p, ok := s.RootPass("web-1"); !ok || p != "pw-123456789" {
		t.Errorf("RootPass = %q, %v", p, ok)
	}
}

func TestCloseReleasesHangingRequests(t *testing.T) {
	s := linodefake.New("tok")
	s.HangNext(1)
	done := make(chan error, 1)
	go func() {
		_, err := client(t, s, "tok").ListInstances(context.Background(), nil)
		done <- err
	}()
	if !s.Wait(5*time.Second, func() bool { return len(s.Requests()) == 1 }) {
		t.Fatal("request never arrived")
	}
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a hung request got an answer")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close left the request hanging")
	}
}
