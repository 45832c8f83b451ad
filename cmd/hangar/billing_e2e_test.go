package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

type billedOrder struct {
	Status     string     `json:"status"`
	Period     int        `json:"period"`
	PaidUntil  *time.Time `json:"paid_until"`
	PoweredOff bool       `json:"powered_off"`
	Operation  string     `json:"operation"`
}

// TestBillingOnTheSimulator is issue 17's story on a real hangar serve with the
// simulator and a 2 s period: money for two and a half periods pays the first period
// and one renewal, the next end suspends the server and powers it off, a top-up in
// the grace brings it back on, and the next unpaid end suspends it again until the
// grace ends and it is deleted. The balance agrees with the ledger at every step.
func TestBillingOnTheSimulator(t *testing.T) {
	t.Parallel()                 // a subprocess's waits, overlapped with another's
	const user, price = 91, 5000 // sim-nano
	d := startDaemon(t, t.TempDir(), "HANGAR_SIM_LATENCY=10ms", "HANGAR_SIM_FAIL_RATE=0",
		"HANGAR_BILLING_PERIOD=2s", "HANGAR_BILLING_GRACE=3s", "HANGAR_BILLING_REMIND=1s")
	d.admin(t, "POST", fmt.Sprintf("/admin/users/%d/deposit", user), []byte(fmt.Sprintf(`{"amount":%d}`, price*5/2)), nil)
	r := hangartest.Do(t, "POST", d.URL+"/orders",
		[]byte(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"sim-nano","region":"tokyo"}`, user, user)),
		"Authorization", "Bearer "+hangartest.WebhookSecret)
	var created struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &created)
	order := func() billedOrder {
		var o billedOrder
		d.admin(t, "GET", fmt.Sprintf("/admin/orders/%d", created.OrderID), nil, &o)
		return o
	}
	// agrees checks the balance against its ledger and against want.
	agrees := func(want int64) {
		t.Helper()
		var acct struct {
			Balance struct{ Available, Held int64 } `json:"balance"`
			Ledger  []ledgerEntry                   `json:"ledger"`
		}
		d.admin(t, "GET", fmt.Sprintf("/admin/users/%d", user), nil, &acct)
		var avail, held int64
		for _, e := range acct.Ledger {
			switch e.Kind {
			case "deposit":
				avail += e.Amount
			case "hold":
				avail, held = avail-e.Amount, held+e.Amount
			case "capture":
				held -= e.Amount
			case "renewal":
				avail -= e.Amount
			}
		}
		if acct.Balance.Available != avail || acct.Balance.Held != held || avail != want || held != 0 {
			t.Fatalf("balance %+v, ledger adds up to %d/%d, want %d available", acct.Balance, avail, held, want)
		}
	}
	steps := []struct {
		what    string
		done    func(o billedOrder) bool
		balance int64
		then    func()
	}{
		{"active, first period paid", func(o billedOrder) bool { return o.Status == "active" && o.Period == 1 && o.PaidUntil != nil }, price * 3 / 2, nil},
		{"one renewal", func(o billedOrder) bool { return o.Status == "active" && o.Period == 2 }, price / 2, nil},
		{"suspended and powered off", func(o billedOrder) bool { return o.Status == "suspended" && o.PoweredOff && o.Operation == "" }, price / 2,
			func() {
				d.admin(t, "POST", fmt.Sprintf("/admin/users/%d/deposit", user), []byte(fmt.Sprintf(`{"amount":%d}`, price/2)), nil)
			}},
		{"back on after the top-up", func(o billedOrder) bool {
			return o.Status == "active" && o.Period == 3 && !o.PoweredOff && o.Operation == ""
		}, 0, nil},
		{"suspended again", func(o billedOrder) bool { return o.Status == "suspended" && o.PoweredOff }, 0, nil},
		{"terminated after the grace", func(o billedOrder) bool { return o.Status == "terminated" }, 0, nil},
	}
	for _, s := range steps {
		var last billedOrder
		hangartest.WaitFor(t, 20*time.Second, s.what, func() bool { last = order(); return s.done(last) })
		agrees(s.balance)
		if s.then != nil {
			s.then()
		}
	}
	var status struct {
		Status    string     `json:"status"`
		PaidUntil *time.Time `json:"paid_until"`
		Period    int        `json:"period"`
	}
	hangartest.Do(t, "GET", d.URL+fmt.Sprintf("/status/%d", created.OrderID), nil,
		"Authorization", "Bearer "+hangartest.WebhookSecret).JSON(t, &status)
	if status.Status != "terminated" || status.Period != 3 || status.PaidUntil == nil {
		t.Fatalf("GET /status: %+v", status)
	}
}
