package http_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

type errBody struct{ Error, Code string }

func TestCreateOrderRefusesBadInput(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 7, 4000) // less than the cheapest plan (5000)
	auth := []string{"Authorization", "Bearer " + hangartest.WebhookSecret}
	valid := `{"user_id":1,"telegram_user_id":"7","spec_id":"sim-nano","region":"tokyo"}`
	tests := []struct {
		name    string
		body    string
		headers []string
		status  int
		code    string
	}{
		{"no bearer", valid, nil, 401, "unauthorized"},
		{"wrong bearer", valid, []string{"Authorization", "Bearer nope"}, 403, "forbidden"},
		{"basic auth instead of bearer", valid, []string{"Authorization", "Basic " + hangartest.WebhookSecret}, 401, "unauthorized"},
		{"empty body", "", auth, 400, "empty_body"},
		{"malformed JSON", `{"user_id":`, auth, 400, "malformed_json"},
		{"wrong type", `{"user_id":"x","telegram_user_id":"7","spec_id":"sim-nano","region":"tokyo"}`, auth, 400, "invalid_field"},
		{"missing fields", `{"user_id":1}`, auth, 400, "missing_fields"},
		{"negative user", `{"user_id":-1,"telegram_user_id":"7","spec_id":"sim-nano","region":"tokyo"}`, auth, 400, "missing_fields"},
		{"unknown plan", `{"user_id":1,"telegram_user_id":"7","spec_id":"huge","region":"tokyo"}`, auth, 400, "unknown_plan"},
		{"unknown region", `{"user_id":1,"telegram_user_id":"7","spec_id":"sim-nano","region":"mars"}`, auth, 400, "unknown_region"},
		{"insufficient funds", valid, auth, 402, "insufficient_funds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hangartest.Do(t, http.MethodPost, env.URL+"/orders", []byte(tt.body), tt.headers...)
			var e errBody
			r.JSON(t, &e)
			if r.Status != tt.status || e.Code != tt.code || e.Error == "" {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
	if orders, _ := env.Store.ListOrders("", 10, 0); len(orders) != 0 {
		t.Fatalf("refused requests stored %d orders", len(orders))
	}
	if b, _ := env.Store.GetBalance(7); b.Available != 4000 || b.Held != 0 {
		t.Fatalf("refused requests moved money: %+v", b)
	}
}

func TestProvisionAndStatusFollowTheSeed(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 7, 100000)
	id := env.Order(t, 7, "sim-nano", "tokyo")
	active := env.WaitStatus(t, id, store.OrderActive, 5*time.Second)

	// GET /status has exactly the seed's fields and the paid time (issue 17).
	r := env.Bearer(t, http.MethodGet, "/status/"+itoa(id), nil)
	var fields map[string]any
	r.JSON(t, &fields)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, ","); got != "created_at,error_message,ip_address,order_id,paid_until,period,price_paid,region,spec_id,status,updated_at" {
		t.Fatalf("status fields = %s", got)
	}
	if fields["status"] != "active" || fields["ip_address"] != active.IPAddress || fields["error_message"] != nil {
		t.Fatalf("status = %s", r.Body)
	}

	// Cancel a second order so that it is no longer pending: /provision answers 409.
	pend := env.Order(t, 7, "sim-nano", "tokyo")
	env.WaitStatus(t, pend, store.OrderActive, 5*time.Second)
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		auth   string
		status int
		code   string
	}{
		{"provision without bearer", "POST", "/provision", `{"order_id":1}`, "", 401, "unauthorized"},
		{"provision wrong bearer", "POST", "/provision", `{"order_id":1}`, "Bearer x", 403, "forbidden"},
		{"provision missing fields", "POST", "/provision", `{"order_id":1}`, "ok", 400, "missing_fields"},
		{"provision unknown order", "POST", "/provision", `{"order_id":999999,"user_id":7,"telegram_user_id":"7"}`, "ok", 404, "not_found"},
		{"provision someone else's order", "POST", "/provision", `{"order_id":` + itoa(id) + `,"user_id":7,"telegram_user_id":"8"}`, "ok", 404, "not_found"},
		{"provision an active order", "POST", "/provision", `{"order_id":` + itoa(id) + `,"user_id":7,"telegram_user_id":"7"}`, "ok", 409, "conflict"},
		{"status without bearer", "GET", "/status/" + itoa(id), "", "", 401, "unauthorized"},
		{"status bad id", "GET", "/status/abc", "", "ok", 400, "bad_order_id"},
		{"status unknown", "GET", "/status/424242", "", "ok", 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			switch tt.auth {
			case "ok":
				h = []string{"Authorization", "Bearer " + hangartest.WebhookSecret}
			case "":
			default:
				h = []string{"Authorization", tt.auth}
			}
			var body []byte
			if tt.body != "" {
				body = []byte(tt.body)
			}
			r := hangartest.Do(t, tt.method, env.URL+tt.path, body, h...)
			var e errBody
			r.JSON(t, &e)
			if r.Status != tt.status || e.Code != tt.code {
				t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, tt.status, tt.code)
			}
		})
	}
}

func TestAdminQueueEndpointsRefuseBadInput(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	tests := []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/admin/orders?status=sleeping", 400, "bad_status"},
		{"GET", "/admin/orders?limit=0", 400, "bad_limit"},
		{"GET", "/admin/orders?limit=99999", 400, "bad_limit"},
		{"GET", "/admin/orders?before=-4", 400, "bad_before"},
		{"GET", "/admin/orders/xyz", 400, "bad_id"},
		{"GET", "/admin/orders/12345", 404, "not_found"},
		{"POST", "/admin/dlq/12345/requeue", 404, "not_found"},
		{"POST", "/admin/users/7/deposit", 400, "empty_body"},
	}
	for _, tt := range tests {
		r := env.Admin(t, tt.method, tt.path, nil)
		var e errBody
		r.JSON(t, &e)
		if r.Status != tt.status || e.Code != tt.code {
			t.Errorf("%s %s: got %d %s, want %d %s", tt.method, tt.path, r.Status, r.Body, tt.status, tt.code)
		}
	}
	for _, body := range []string{`{"amount":0}`, `{"amount":-5}`, `{"amount":1.5}`, `{}`, `{"amount":2000000000}`} {
		r := env.Admin(t, "POST", "/admin/users/7/deposit", []byte(body))
		if r.Status != 400 {
			t.Errorf("deposit %s: %d %s", body, r.Status, r.Body)
		}
	}
	if b, _ := env.Store.GetBalance(7); b.Available != 0 {
		t.Fatalf("refused deposits credited %d", b.Available)
	}
	for _, path := range []string{"/admin/queue", "/admin/orders", "/admin/dlq", "/admin/events"} {
		if r := hangartest.Do(t, "GET", env.URL+path, nil); r.Status != 401 {
			t.Errorf("%s without a token: %d", path, r.Status)
		}
		if r := hangartest.Do(t, "GET", env.URL+path, nil, "Authorization", "Bearer "+hangartest.WebhookSecret); r.Status != 403 {
			t.Errorf("%s with the webhook secret instead of the admin token: %d", path, r.Status)
		}
	}
}

func TestEventStreamShowsTheLifecycle(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 7, 100000)
	req, _ := http.NewRequest("GET", env.URL+"/admin/events", nil)
	req.Header.Set("Authorization", "Bearer "+hangartest.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan [2]string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var typ string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				events <- [2]string{typ, strings.TrimPrefix(line, "data: ")}
			}
		}
		close(events)
	}()
	next := func() [2]string {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return [2]string{}
	}
	if first := next(); first[0] != "snapshot" || !json.Valid([]byte(first[1])) {
		t.Fatalf("first event = %v, want a snapshot", first)
	}
	id := env.Order(t, 7, "sim-nano", "tokyo")
	var steps []string
	for len(steps) < 3 {
		ev := next()
		if ev[0] != "order" {
			continue
		}
		var oe struct {
			Event   string `json:"event"`
			OrderID int64  `json:"order_id"`
		}
		if err := json.Unmarshal([]byte(ev[1]), &oe); err != nil || oe.OrderID != id {
			t.Fatalf("order event %s", ev[1])
		}
		steps = append(steps, oe.Event)
	}
	if got := strings.Join(steps, " "); got != "enqueued started succeeded" {
		t.Fatalf("events = %s", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
