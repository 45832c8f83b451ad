package http_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// The admin billing routes over the real app: renew pays a period (402 when the
// balance cannot), autorenew switches renewal, and GET /status and the admin order
// show the paid time.
func TestAdminBillingRoutes(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 7, 10000) // two periods of sim-nano
	id := env.Order(t, 7, "sim-nano", "tokyo")
	active := env.WaitStatus(t, id, store.OrderActive, 5*time.Second)

	var status struct {
		PaidUntil *time.Time `json:"paid_until"`
		Period    int        `json:"period"`
	}
	env.Bearer(t, http.MethodGet, "/status/"+itoa(id), nil).JSON(t, &status)
	if status.PaidUntil == nil || !status.PaidUntil.Equal(active.PaidUntil) || status.Period != 1 {
		t.Fatalf("GET /status paid time: %+v, want %v and period 1", status, active.PaidUntil)
	}
	tests := []struct {
		name, path, body string
		want             int
		check            func(o api.Order) bool
	}{
		{"renew", "/renew", "", 200, func(o api.Order) bool {
			return o.Period == 2 && o.PaidUntil != nil && o.PaidUntil.Equal(active.PaidUntil.Add(720*time.Hour))
		}},
		{"renew without money", "/renew", "", 402, nil},
		{"auto-renew off", "/autorenew", `{"on":false}`, 200, func(o api.Order) bool { return !o.AutoRenew }},
		{"auto-renew without on", "/autorenew", `{}`, 400, nil},
		{"auto-renew on", "/autorenew", `{"on":true}`, 200, func(o api.Order) bool { return o.AutoRenew }},
	}
	for _, tt := range tests {
		r := env.Admin(t, http.MethodPost, "/admin/orders/"+itoa(id)+tt.path, []byte(tt.body))
		if r.Status != tt.want {
			t.Fatalf("%s: %d %s, want %d", tt.name, r.Status, r.Body, tt.want)
		}
		if tt.check != nil {
			var o api.Order
			r.JSON(t, &o)
			if !tt.check(o) {
				t.Fatalf("%s: %s", tt.name, r.Body)
			}
		}
	}
	if r := env.Admin(t, http.MethodPost, "/admin/orders/999/renew", nil); r.Status != 404 {
		t.Fatalf("renew of an unknown order: %d %s", r.Status, r.Body)
	}
	var o api.Order
	env.Admin(t, http.MethodGet, "/admin/orders/"+itoa(id), nil).JSON(t, &o)
	if o.Period != 2 || o.PaidUntil == nil || !o.AutoRenew {
		t.Fatalf("GET /admin/orders/:id billing: %+v", o)
	}
	ledger, _ := env.Store.Ledger(7, 100)
	renewals := 0
	for _, e := range ledger {
		if e.Kind == store.LedgerRenewal {
			renewals++
		}
	}
	if b, _ := env.Store.GetBalance(7); b.Available != 0 || renewals != 1 {
		t.Fatalf("balance %+v with %d renewals, want 0 and 1", b, renewals)
	}
}
