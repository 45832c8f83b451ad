package http_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// FuzzDepositBody sends arbitrary bodies to POST /admin/users/:id/deposit: every answer
// is 200 with the balance grown by exactly the amount, or a JSON error with nothing
// stored.
func FuzzDepositBody(f *testing.F) {
	for _, seed := range []string{
		`{"amount":100}`, `{"amount":0}`, `{"amount":-5}`, `{"amount":1000000001}`, `{"amount":1.5}`,
		`{"amount":"100"}`, `{"amount":null}`, `{}`, `[]`, `null`, ``, `{"amount":100,"amount":200}`,
		`{"amount":9223372036854775807}`, `{"amount":1e3}`, `{"amount":100}trailing`, "\x00", `{"amount":1`,
	} {
		f.Add([]byte(seed))
	}
	env := hangartest.Start(f, hangartest.Options{})
	const user = 77
	f.Fuzz(func(t *testing.T, body []byte) {
		before, err := env.Store.GetBalance(user)
		if err != nil {
			t.Fatal(err)
		}
		r := env.Admin(t, http.MethodPost, "/admin/users/77/deposit", body)
		after, err := env.Store.GetBalance(user)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == 200 {
			var req struct{ Amount int64 }
			if err := json.Unmarshal(body, &req); err != nil || req.Amount < 1 || req.Amount > 1_000_000_000 {
				t.Fatalf("body %q was accepted (%s)", body, r.Body)
			}
			if after.Available-before.Available != req.Amount {
				t.Fatalf("body %q moved the balance by %d", body, after.Available-before.Available)
			}
			return
		}
		var e struct{ Error, Code string }
		if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == "" || e.Code == "" {
			t.Fatalf("body %q: answer %d %s is not a JSON error", body, r.Status, r.Body)
		}
		if r.Status >= 500 {
			t.Fatalf("body %q: %d %s; bad input is the client's fault", body, r.Status, r.Body)
		}
		if after.Available != before.Available || !bytes.Equal(mustJSON(t, after), mustJSON(t, before)) {
			t.Fatalf("body %q was refused (%d) but the balance changed", body, r.Status)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
