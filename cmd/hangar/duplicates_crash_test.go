package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// TestCrashDuringCreatesLeavesOneServerPerOrder kills hangar with SIGKILL while creates
// are in flight at a provider whose labels are not unique (Vultr; Linode told to allow
// them) and whose creates take a while to become listable: the race of issue 14, where
// the restarted order looked for its server before the provider had made it, found
// none, and made a second.
// It ends with exactly one server per active order, none for failed orders, and the
// orphan an earlier run left behind reported and (as the operator allowed) deleted.
func TestCrashDuringCreatesLeavesOneServerPerOrder(t *testing.T) {
	t.Parallel() // a subprocess's waits, overlapped with another's
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (cloudFake, []string)
	}{
		{"vultr", func(t *testing.T) (cloudFake, []string) {
			const key = "vultr-crash-test-key"
			f := vultrfake.New(key, fakeapi.WithCreateDelay(2500*time.Millisecond), fakeapi.WithDuplicateLabels())
			t.Cleanup(f.Close)
			return vultrCloud{f}, []string{"HANGAR_VULTR_API_KEY=" + key, "HANGAR_VULTR_API=" + f.URL()}
		}},
		{"linode", func(t *testing.T) (cloudFake, []string) {
			const token = "linode-crash-test-token"
			f := linodefake.New(token, fakeapi.WithCreateDelay(2500*time.Millisecond), fakeapi.WithDuplicateLabels())
			t.Cleanup(f.Close)
			return linodeCloud{f}, []string{"HANGAR_LINODE_TOKEN=" + token, "HANGAR_LINODE_API=" + f.URL()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, providerEnv := tc.open(t)
			crashDuringCreates(t, fake, providerEnv)
		})
	}
}

// cloudFake is what the test needs of a provider fake.
type cloudFake interface {
	URL() string
	spec() (specID, region, plan string)
	seed(label string) string // an instance hangar did not create; returns its id
	FailNext(n, status int)
	Wait(timeout time.Duration, cond func() bool) bool
	creates() int
	servers() map[string][]string // label -> ids
	Count() int
}

func crashDuringCreates(t *testing.T, fake cloudFake, providerEnv []string) {
	specID, region, _ := fake.spec()
	orphan := fake.seed("hangar-order-999999") // no such order
	env := append(providerEnv,
		"HANGAR_MAX_CONCURRENCY=16", "HANGAR_MAX_RETRIES=0", "HANGAR_POLL_INTERVAL=50ms",
		"HANGAR_ORDERS_PER_HOUR=1000", "HANGAR_CREATE_SETTLE=3s",
		"HANGAR_RECONCILE_EVERY=0", "HANGAR_RECONCILE_DELETE_ORPHANS=true",
	)
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, env...)
	d.admin(t, "POST", "/admin/users/77/deposit", []byte(`{"amount":1000000}`), nil)
	fake.FailNext(2, http.StatusBadRequest) // the first two orders fail for good: no server may exist for them
	const orders = 14
	for range orders {
		r := hangartest.Do(t, "POST", d.URL+"/orders",
			[]byte(fmt.Sprintf(`{"user_id":77,"telegram_user_id":"77","spec_id":%q,"region":%q}`, specID, region)),
			"Authorization", "Bearer "+hangartest.WebhookSecret)
		if r.Status != 201 {
			t.Fatalf("order: %d %s", r.Status, r.Body)
		}
	}
	// Kill while the provider is still making servers whose creates hangar sent.
	if !fake.Wait(20*time.Second, func() bool { return fake.creates() >= orders-2 }) {
		t.Fatalf("no creates in flight: %d creates, %d servers", fake.creates(), fake.Count())
	}
	d.kill()
	t.Logf("killed with %d creates sent and %d servers made", fake.creates(), fake.Count()-1)

	d = startDaemon(t, dataDir, env...)
	var final []adminOrder
	hangartest.WaitFor(t, 60*time.Second, "every order to finish", func() bool {
		final = d.orders(t)
		for _, o := range final {
			if o.Status == "pending" || o.Status == "provisioning" {
				return false
			}
		}
		return len(final) == orders
	})
	// Before any reconcile: the restarted orders waited for the creates in flight and
	// found their servers, so none was made twice.
	byLabel := fake.servers()
	delete(byLabel, "hangar-order-999999")
	active, failed := 0, 0
	for _, o := range final {
		servers := byLabel[fmt.Sprintf("hangar-order-%d", o.OrderID)]
		switch o.Status {
		case "active":
			active++
			if len(servers) != 1 || o.InstanceID == nil || servers[0] != *o.InstanceID {
				t.Errorf("active order %d has servers %v at the provider, records %v", o.OrderID, servers, o.InstanceID)
			}
		case "failed":
			failed++
			if len(servers) != 0 {
				t.Errorf("failed order %d has servers %v at the provider", o.OrderID, servers)
			}
		default:
			t.Errorf("order %d ended %s", o.OrderID, o.Status)
		}
	}
	if fake.Count()-1 != active {
		t.Errorf("the provider holds %d servers for %d active orders (and one orphan): %v", fake.Count()-1, active, byLabel)
	}
	if failed != 2 || active != orders-2 {
		t.Errorf("%d active and %d failed, want %d and 2", active, failed, orders-2)
	}

	var rep struct {
		Servers    int `json:"servers"`
		Duplicates []struct {
			InstanceID string `json:"instance_id"`
		} `json:"duplicates"`
		Orphans []struct {
			InstanceID string `json:"instance_id"`
			Deleted    bool   `json:"deleted"`
		} `json:"orphans"`
	}
	d.admin(t, "POST", "/admin/reconcile", nil, &rep)
	if len(rep.Duplicates) != 0 {
		t.Errorf("reconcile found duplicates: %+v", rep.Duplicates)
	}
	if len(rep.Orphans) != 1 || rep.Orphans[0].InstanceID != orphan || !rep.Orphans[0].Deleted {
		t.Errorf("reconcile orphans = %+v, want %s deleted", rep.Orphans, orphan)
	}
	var last struct {
		Orphans []struct {
			InstanceID string `json:"instance_id"`
		} `json:"orphans"`
	}
	d.admin(t, "GET", "/admin/reconcile", nil, &last)
	if len(last.Orphans) != 1 {
		t.Errorf("GET /admin/reconcile does not show the last findings: %+v", last)
	}
	metrics := hangartest.Do(t, "GET", d.URL+"/metrics", nil)
	for _, name := range []string{"hangar_reconcile_duplicates", "hangar_reconcile_orphans 0", "hangar_reconcile_deleted_total"} {
		if !bytes.Contains(metrics.Body, []byte(name)) {
			t.Errorf("/metrics lacks %q", name)
		}
	}

	if fake.Count() != active {
		t.Errorf("after the reconcile the provider holds %d servers for %d active orders", fake.Count(), active)
	}
}

type vultrCloud struct{ *vultrfake.Server }

func (vultrCloud) spec() (string, string, string) { return "vultr-1g", "nrt", "vc2-1c-1gb" }
func (v vultrCloud) seed(label string) string     { return v.Seed(label, "nrt", "vc2-1c-1gb").ID }
func (v vultrCloud) creates() int {
	return countPosts(v.Requests(), func(r vultrfake.Request) bool { return r.Method == http.MethodPost && r.Path == "/v2/instances" })
}
func (v vultrCloud) servers() map[string][]string {
	out := map[string][]string{}
	for _, in := range v.Instances() {
		out[in.Label] = append(out[in.Label], in.ID)
	}
	return out
}

type linodeCloud struct{ *linodefake.Server }

func (linodeCloud) spec() (string, string, string) {
	return "linode-nano", "ap-northeast", "g6-nanode-1"
}
func (l linodeCloud) seed(label string) string {
	return strconv.Itoa(l.Seed(label, "ap-northeast", "g6-nanode-1").ID)
}
func (l linodeCloud) creates() int {
	return countPosts(l.Requests(), func(r linodefake.Request) bool {
		return r.Method == http.MethodPost && r.Path == "/v4/linode/instances"
	})
}
func (l linodeCloud) servers() map[string][]string {
	out := map[string][]string{}
	for _, in := range l.Instances() {
		out[in.Label] = append(out[in.Label], strconv.Itoa(in.ID))
	}
	return out
}

func countPosts[R any](reqs []R, match func(R) bool) int {
	n := 0
	for _, r := range reqs {
		if match(r) {
			n++
		}
	}
	return n
}
