package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	"github.com/hangarhq/hangar/internal/hangartest"
)

type adminOrder struct {
	OrderID    int64   `json:"order_id"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	InstanceID *string `json:"instance_id"`
	Waiting    bool    `json:"waiting_retry"`
}

func (d *daemon) admin(t *testing.T, method, path string, body []byte, v any) {
	t.Helper()
	r := hangartest.Do(t, method, d.URL+path, body, "Authorization", "Bearer "+hangartest.AdminToken)
	if r.Status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	if v != nil {
		r.JSON(t, v)
	}
}

func (d *daemon) orders(t *testing.T) []adminOrder {
	t.Helper()
	var page struct {
		Orders []adminOrder `json:"orders"`
	}
	d.admin(t, "GET", "/admin/orders?limit=500", nil, &page)
	return page.Orders
}

// TestCrashRecoveryProvisionsEachOrderOnce kills hangar with SIGKILL while orders are
// pending, waiting for a retry and in flight at a (fake) Linode, restarts it, and
// checks that every accepted order ends in exactly one terminal state, none is lost,
// no server is created twice and money moved once per order.
func TestCrashRecoveryProvisionsEachOrderOnce(t *testing.T) {
	t.Parallel() // a subprocess's waits, overlapped with another's
	linode := linodefake.New("linode-test-token", fakeapi.WithLatency(150*time.Millisecond))
	defer linode.Close()
	env := []string{
		"HANGAR_LINODE_TOKEN=linode-test-token", "HANGAR_LINODE_API=" + linode.URL(),
		"HANGAR_MAX_CONCURRENCY=4", "HANGAR_RETRY_BASE=400ms", "HANGAR_POLL_INTERVAL=50ms",
		"HANGAR_ORDERS_PER_HOUR=1000",
		// Creates cut by the kill finish at the fake within its latency.
		"HANGAR_CREATE_SETTLE=500ms",
	}
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, env...)
	const user, orders, price = 77, 24, 7000
	d.admin(t, "POST", "/admin/users/77/deposit", []byte(`{"amount":1000000}`), nil)
	linode.FailNext(6, 503) // the first attempts fail: some orders will be waiting for a retry
	accepted := map[int64]bool{}
	for range orders {
		r := hangartest.Do(t, "POST", d.URL+"/orders",
			[]byte(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"linode-nano","region":"ap-northeast"}`, user, user)),
			"Authorization", "Bearer "+hangartest.WebhookSecret)
		if r.Status != 201 {
			t.Fatalf("order: %d %s", r.Status, r.Body)
		}
		var o struct {
			OrderID int64 `json:"order_id"`
		}
		r.JSON(t, &o)
		accepted[o.OrderID] = true
	}
	// Kill once the queue holds all three kinds: in flight, waiting for a retry, pending.
	hangartest.WaitFor(t, 20*time.Second, "orders in flight, waiting and pending", func() bool {
		var s struct {
			InFlight     int `json:"in_flight"`
			WaitingRetry int `json:"waiting_retry"`
			Pending      int `json:"pending"`
		}
		d.admin(t, "GET", "/admin/queue", nil, &s)
		return s.InFlight > 0 && s.WaitingRetry > 0 && s.Pending > 0
	})
	d.kill()

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
	active := 0
	instances := map[string]string{}
	for _, inst := range linode.Instances() {
		if prev, dup := instances[inst.Label]; dup {
			t.Fatalf("label %s created twice (instances %s and %d)", inst.Label, prev, inst.ID)
		}
		instances[inst.Label] = strconv.Itoa(inst.ID)
	}
	for _, o := range final {
		if !accepted[o.OrderID] {
			t.Fatalf("unknown order %d", o.OrderID)
		}
		delete(accepted, o.OrderID)
		switch o.Status {
		case "active":
			active++
			label := fmt.Sprintf("hangar-order-%d", o.OrderID)
			if o.InstanceID == nil || instances[label] != *o.InstanceID {
				t.Errorf("order %d active with instance %v, provider has %q", o.OrderID, o.InstanceID, instances[label])
			}
		case "failed":
		default:
			t.Errorf("order %d ended %s", o.OrderID, o.Status)
		}
	}
	if len(accepted) != 0 {
		t.Fatalf("orders lost: %v", accepted)
	}
	if len(instances) != active {
		t.Fatalf("provider holds %d servers for %d active orders", len(instances), active)
	}
	var bal struct {
		Balance struct{ Available, Held int64 } `json:"balance"`
	}
	d.admin(t, "GET", "/admin/users/77", nil, &bal)
	if bal.Balance.Held != 0 || bal.Balance.Available != 1000000-int64(active)*price {
		t.Fatalf("balance %+v after %d active orders at %d", bal.Balance, active, price)
	}
	raw, _ := json.Marshal(final)
	t.Logf("%d active of %d; orders: %s", active, orders, raw[:min(len(raw), 300)])
}
