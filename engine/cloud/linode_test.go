package cloud_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
)

const linodeToken = "linode-token-7f3a9c"

type linodeFake struct{ *linodefake.Server }

func (f linodeFake) requests() int { return len(f.Requests()) }

func (f linodeFake) seed(label string) string {
	return strconv.Itoa(f.Seed(label, "ap-northeast", "g6-nanode-1").ID)
}

func openLinode(token, url string, timeout time.Duration) (cloud.Provider, error) {
	return cloud.NewLinode(token, url, httpClient(timeout))
}

func linodeReq(label string) cloud.CreateRequest {
	return cloud.CreateRequest{Label: label, Region: "ap-northeast", Plan: "g6-nanode-1", RootPassword: rootPass}
}

func linodeCase() providerCase {
	return providerCase{
		name:         "linode",
		secret:       linodeToken,
		open:         openLinode,
		newFake:      func() fakeCloud { return linodeFake{linodefake.New(linodeToken)} },
		req:          linodeReq,
		badPlan:      cloud.CreateRequest{Label: "a3", Region: "ap-northeast", Plan: "g6-bogus-1", RootPassword: rootPass},
		badRegion:    cloud.CreateRequest{Label: "a4", Region: "mars-1", Plan: "g6-nanode-1", RootPassword: rootPass},
		uniqueLabels: true,
	}
}

func setupLinode(t *testing.T, opts ...fakeapi.Option) (*cloud.Linode, *linodefake.Server) {
	t.Helper()
	fake := linodefake.New(linodeToken, opts...)
	t.Cleanup(fake.Close)
	p, err := cloud.NewLinode(linodeToken, fake.URL(), &http.Client{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p, fake
}

func TestLinodeLifecycle(t *testing.T) {
	p, fake := setupLinode(t)
	in, err := p.Create(t.Context(), linodeReq("hangar-order-1"))
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
	if got, _ := fake.RootPass("hangar-order-1"); got != rootPass {
		t.Errorf("root_pass at the provider = %q", got)
	}
	insts := fake.Instances()
	if len(insts) != 1 || insts[0].Image != cloud.LinodeDefaultImage || !slices.Contains(insts[0].Tags, cloud.Tag) {
		t.Fatalf("provider holds %+v", insts)
	}
	checkFound(t, p, linodeFake{fake}, in)
}

func TestLinodeBootDelay(t *testing.T) {
	p, _ := setupLinode(t, fakeapi.WithBootDelay(time.Hour))
	in, err := p.Create(t.Context(), linodeReq("hangar-order-1"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Get(t.Context(), in.ID)
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
