package http_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// FuzzOrderBodies sends arbitrary bodies to POST /orders and POST /provision. Every
// answer is a success that stored exactly one order (/orders) or a JSON 4xx error
// that stored none; never a 5xx.
func FuzzOrderBodies(f *testing.F) {
	for _, seed := range []string{
		`{"user_id":42,"telegram_user_id":"42","spec_id":"sim-nano","region":"tokyo"}`,
		`{"user_id":"42","telegram_user_id":42,"spec_id":"sim-nano","region":"tokyo"}`,
		`{"user_id":42,"telegram_user_id":"42","spec_id":"nope","region":"tokyo"}`,
		`{"user_id":42,"telegram_user_id":"42","spec_id":"sim-nano","region":"mars"}`,
		`{"user_id":-1,"telegram_user_id":"42","spec_id":"sim-nano","region":"tokyo"}`,
		`{"user_id":1e3,"telegram_user_id":"1e3","spec_id":"sim-nano","region":"tokyo"}`,
		`{"user_id":9223372036854775808,"telegram_user_id":"42","spec_id":"sim-nano","region":"tokyo"}`,
		`{"order_id":1,"user_id":42,"telegram_user_id":"42"}`,
		`{"order_id":"1","user_id":42,"telegram_user_id":42}`,
		`{}`, `[]`, `null`, ``, "\x00", `{"user_id":42`, `{"spec_id":["sim-nano"]}`, `{"region":"` + "\u202e" + `"}`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	// A high order limit: the fuzzer may create many orders for one user.
	env := hangartest.Start(f, hangartest.Options{Queue: engine.QueueConfig{OrderLimit: store.OrderLimit{Max: 1 << 30, Window: time.Hour}}})
	env.Deposit(f, 42, 1_000_000_000)
	f.Fuzz(func(t *testing.T, body []byte, provision bool) {
		path := "/orders"
		if provision {
			path = "/provision"
		}
		before := countOrders(t, env)
		r := env.Bearer(t, http.MethodPost, path, body)
		after := countOrders(t, env)
		switch {
		case r.Status == 201 && !provision:
			if after != before+1 {
				t.Fatalf("body %q: 201 but %d orders were stored", body, after-before)
			}
			return
		case r.Status == 202 && provision:
		case r.Status >= 500:
			t.Fatalf("%s body %q: %d %s; bad input is the client's fault", path, body, r.Status, r.Body)
		case r.Status >= 200 && r.Status < 300:
			t.Fatalf("%s body %q: unexpected %d %s", path, body, r.Status, r.Body)
		default:
			var e struct{ Error, Code string }
			if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == "" || e.Code == "" {
				t.Fatalf("%s body %q: answer %d %s is not a JSON error", path, body, r.Status, r.Body)
			}
		}
		if after != before {
			t.Fatalf("%s body %q: answered %d but %d orders were stored", path, body, r.Status, after-before)
		}
	})
}

// countOrders counts every order in one read of the order records (status "" lists
// them all), so that an order moving between statuses meanwhile is counted once.
func countOrders(t *testing.T, env *hangartest.Env) int {
	t.Helper()
	orders, err := env.Store.ListOrders("", 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(orders)
}
