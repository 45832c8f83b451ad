package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

type ledgerEntry struct {
	Seq       uint64    `json:"seq"`
	At        time.Time `json:"at"`
	Kind      string    `json:"kind"`
	Amount    int64     `json:"amount"`
	OrderID   int64     `json:"order_id"`
	Available int64     `json:"available_after"`
	Held      int64     `json:"held_after"`
	Note      string    `json:"note"`
}

// TestBillingCrashRenewsEachPeriodOnce runs a real hangar serve with a 2 s billing
// period and kills it with SIGKILL again and again, at random points, while six
// servers renew from one balance. The balance pays exactly twelve renewals; then
// every server is suspended and, after the grace, deleted. Whatever the kills cut,
// the ledger must hold exactly one renewal per order and period, none taken before
// its period began (a period charged twice is a later period charged early), its
// running totals must add up, and the balance must be what is left.
func TestBillingCrashRenewsEachPeriodOnce(t *testing.T) {
	t.Parallel() // a subprocess's waits, overlapped with another's
	const (
		user, orders, price = 88, 6, 5000 // sim-nano
		renewalsPaid        = 12
		leftover            = price / 2
		deposit             = orders*price + renewalsPaid*price + leftover
	)
	env := []string{
		"HANGAR_SIM_LATENCY=20ms-80ms", "HANGAR_SIM_FAIL_RATE=0.05", "HANGAR_RETRY_BASE=100ms", "HANGAR_POLL_INTERVAL=20ms",
		"HANGAR_CREATE_SETTLE=200ms",
		"HANGAR_BILLING_PERIOD=2s", "HANGAR_BILLING_GRACE=2s", "HANGAR_BILLING_REMIND=1s",
	}
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, env...)
	d.admin(t, "POST", fmt.Sprintf("/admin/users/%d/deposit", user), []byte(fmt.Sprintf(`{"amount":%d}`, deposit)), nil)
	for range orders {
		r := hangartest.Do(t, "POST", d.URL+"/orders",
			[]byte(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"sim-nano","region":"tokyo"}`, user, user)),
			"Authorization", "Bearer "+hangartest.WebhookSecret)
		if r.Status != 201 {
			t.Fatalf("order: %d %s", r.Status, r.Body)
		}
	}
	rnd := rand.New(rand.NewPCG(17, uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(90 * time.Second)
	kills := 0
	for kills < 10 && time.Now().Before(deadline) {
		time.Sleep(time.Duration(200+rnd.IntN(1300)) * time.Millisecond)
		d.kill()
		kills++
		d = startDaemon(t, dataDir, env...)
	}
	var final []adminOrder
	hangartest.WaitFor(t, 90*time.Second, "every server to be suspended and deleted", func() bool {
		final = d.orders(t)
		done := 0
		for _, o := range final {
			if o.Status == "terminated" {
				done++
			}
		}
		return len(final) == orders && done == orders
	})
	var acct struct {
		Balance struct{ Available, Held int64 } `json:"balance"`
		Ledger  []ledgerEntry                   `json:"ledger"`
	}
	d.admin(t, "GET", fmt.Sprintf("/admin/users/%d", user), nil, &acct)
	var avail, held int64
	const period = 2 * time.Second
	periods := map[int64][]int{}
	activated := map[int64]time.Time{}
	for _, e := range acct.Ledger {
		switch e.Kind {
		case "deposit":
			avail += e.Amount
		case "hold":
			avail, held = avail-e.Amount, held+e.Amount
		case "capture":
			held -= e.Amount
			activated[e.OrderID] = e.At
		case "release":
			avail, held = avail+e.Amount, held-e.Amount
		case "renewal":
			avail -= e.Amount
			p, err := strconv.Atoi(strings.TrimPrefix(e.Note, "period "))
			if err != nil || e.Amount != price {
				t.Fatalf("renewal entry %+v", e)
			}
			periods[e.OrderID] = append(periods[e.OrderID], p)
			// The capture and the first paid_until are stamped in one commit, a hair apart.
			if due := activated[e.OrderID].Add(time.Duration(p-1)*period - 50*time.Millisecond); e.At.Before(due) {
				t.Fatalf("order %d: period %d charged at %v, before it began (%v)", e.OrderID, p, e.At, due)
			}
		default:
			t.Fatalf("unexpected ledger entry %+v", e)
		}
		if e.Available != avail || e.Held != held {
			t.Fatalf("ledger entry %d (%s) says %d/%d; the entries add up to %d/%d", e.Seq, e.Kind, e.Available, e.Held, avail, held)
		}
	}
	renewed := 0
	for id, ps := range periods {
		for i, p := range ps {
			if p != i+2 {
				t.Fatalf("order %d renewed periods %v: want 2, 3, … each once", id, ps)
			}
		}
		renewed += len(ps)
	}
	if renewed != renewalsPaid || acct.Balance.Available != leftover || acct.Balance.Held != 0 || avail != leftover {
		t.Fatalf("%d renewals (%v), balance %+v, ledger total %d: want %d renewals and %d left",
			renewed, periods, acct.Balance, avail, renewalsPaid, leftover)
	}
	for _, o := range final {
		var full struct {
			Period  int `json:"period"`
			History []struct {
				Event string `json:"event"`
			} `json:"history"`
		}
		d.admin(t, "GET", fmt.Sprintf("/admin/orders/%d", o.OrderID), nil, &full)
		if full.Period != 1+len(periods[o.OrderID]) {
			t.Errorf("order %d at period %d with %d renewals in the ledger", o.OrderID, full.Period, len(periods[o.OrderID]))
		}
		var events []string
		for _, h := range full.History {
			events = append(events, h.Event)
		}
		joined := " " + strings.Join(events, " ") + " "
		for _, want := range []string{" suspended ", " grace_ended ", " terminated "} {
			if !strings.Contains(joined, want) {
				t.Errorf("order %d history lacks%s: %v", o.OrderID, want, events)
			}
		}
	}
	t.Logf("%d kills; renewals per order: %v", kills, periods)
}
