package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// TestCrashDuringCompletionsChargesEachOrderOnce kills hangar with SIGKILL twice while
// servers are becoming ready many at a time, so that the kills land among the
// completer's batches: collected, being committed, committed and not yet reported.
// Every order must end active with one server, one hold and one capture: an order
// whose batch the kill cut off is resumed and found by label, never charged twice.
func TestCrashDuringCompletionsChargesEachOrderOnce(t *testing.T) {
	t.Parallel() // a subprocess's waits, overlapped with another's
	linode := linodefake.New("linode-test-token", fakeapi.WithLatency(15*time.Millisecond))
	defer linode.Close()
	env := []string{
		"HANGAR_LINODE_TOKEN=linode-test-token", "HANGAR_LINODE_API=" + linode.URL(),
		"HANGAR_MAX_CONCURRENCY=64", "HANGAR_POLL_INTERVAL=20ms", "HANGAR_RETRY_BASE=200ms",
		"HANGAR_ORDERS_PER_HOUR=100000", "HANGAR_CREATE_SETTLE=300ms",
	}
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, env...)
	const user, orders, price, deposit = 78, 240, 7000, 10_000_000
	d.admin(t, "POST", fmt.Sprintf("/admin/users/%d/deposit", user), []byte(fmt.Sprintf(`{"amount":%d}`, deposit)), nil)

	var mu sync.Mutex
	accepted := map[int64]bool{}
	var posters sync.WaitGroup
	defer posters.Wait()
	body := []byte(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"linode-nano","region":"ap-northeast"}`, user, user))
	// post places n orders from 8 clients, in the background; a client stops at the
	// kill (an order whose answer it lost may exist, and is checked like any other).
	post := func(d *daemon, n int) {
		for range 8 {
			posters.Go(func() {
				for range n / 8 {
					req, _ := http.NewRequest("POST", d.URL+"/orders", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+hangartest.WebhookSecret)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return
					}
					var o struct {
						OrderID int64 `json:"order_id"`
					}
					err = json.NewDecoder(resp.Body).Decode(&o)
					resp.Body.Close()
					if resp.StatusCode != 201 || err != nil {
						return
					}
					mu.Lock()
					accepted[o.OrderID] = true
					mu.Unlock()
				}
			})
		}
	}
	// killAmidCompletions kills once some orders of this run have completed while
	// others are still in flight.
	killAmidCompletions := func(d *daemon, after int) {
		hangartest.WaitFor(t, 30*time.Second, "completions under way", func() bool {
			var s struct {
				InFlight  int `json:"in_flight"`
				Succeeded int `json:"succeeded"`
			}
			d.admin(t, "GET", "/admin/queue", nil, &s)
			return s.Succeeded >= after && s.InFlight > 0
		})
		d.kill()
	}

	post(d, orders/2)
	killAmidCompletions(d, 20)
	posters.Wait()
	d = startDaemon(t, dataDir, env...)
	post(d, orders/2)
	killAmidCompletions(d, 10)
	posters.Wait()
	d = startDaemon(t, dataDir, env...)

	mu.Lock()
	want := len(accepted)
	mu.Unlock()
	var final []adminOrder
	hangartest.WaitFor(t, 60*time.Second, "every order to finish", func() bool {
		final = d.orders(t)
		for _, o := range final {
			if o.Status != "active" && o.Status != "failed" {
				return false
			}
		}
		return len(final) >= want
	})
	resumed := 0 // orders a kill caught provisioning, their completion not yet committed
	for _, o := range final {
		if _, events := d.order(t, o.OrderID); slices.Contains(events, "resumed") {
			resumed++
		}
	}
	if resumed == 0 {
		t.Fatal("no order was caught provisioning by the kills: the test did not test the crash")
	}
	servers := map[string]int{}
	for _, inst := range linode.Instances() {
		servers[inst.Label]++
	}
	mu.Lock()
	defer mu.Unlock()
	for _, o := range final {
		if o.Status != "active" {
			t.Errorf("order %d ended %s", o.OrderID, o.Status)
		}
		if n := servers[fmt.Sprintf("hangar-order-%d", o.OrderID)]; n != 1 {
			t.Errorf("order %d has %d servers", o.OrderID, n)
		}
		delete(accepted, o.OrderID)
	}
	if len(accepted) != 0 {
		t.Fatalf("accepted orders lost: %v", accepted)
	}
	var bal struct {
		Balance struct{ Available, Held int64 } `json:"balance"`
		Ledger  []struct {
			Kind    string `json:"kind"`
			OrderID int64  `json:"order_id"`
		} `json:"ledger"`
	}
	d.admin(t, "GET", fmt.Sprintf("/admin/users/%d", user), nil, &bal)
	moves := map[int64]map[string]int{}
	for _, e := range bal.Ledger {
		if e.OrderID != 0 {
			if moves[e.OrderID] == nil {
				moves[e.OrderID] = map[string]int{}
			}
			moves[e.OrderID][e.Kind]++
		}
	}
	for _, o := range final {
		if m := moves[o.OrderID]; m["hold"] != 1 || m["capture"] != 1 || len(m) != 2 {
			t.Errorf("order %d: ledger %v, want one hold and one capture", o.OrderID, m)
		}
	}
	if bal.Balance.Held != 0 || bal.Balance.Available != deposit-int64(len(final))*price {
		t.Fatalf("balance %+v after %d active orders at %d", bal.Balance, len(final), price)
	}
	t.Logf("%d orders over two kills amid completions (%d resumed), each active, captured once, one server each", len(final), resumed)
}
