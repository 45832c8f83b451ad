package http_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// The server answers with the same http/api types the console decodes: decoding an
// answer into its type loses no field and encoding it again gives the same bytes.
func TestAdminAnswersAreTheirAPITypes(t *testing.T) {
	// A window long enough to outlive the wall clock, which the rate-limit view reads.
	env := hangartest.Start(t, hangartest.Options{RateLimit: 3, RateWindow: 100 * 365 * 24 * time.Hour})
	env.Deposit(t, 7, 100000)
	id := env.Order(t, 7, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderActive, 5*time.Second)
	for i := int64(1); i <= 4; i++ {
		env.PostUpdate(t, hangartest.Update(i, 42, "hello"))
	}
	env.Settle(t)
	hangartest.Do(t, "POST", env.URL+"/api/views/hello-world", nil)

	same := func(method, path string, v any) {
		t.Helper()
		r := env.Admin(t, method, path, nil)
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, r.Body)
		}
		again, _ := json.Marshal(v)
		if !bytes.Equal(again, bytes.TrimSpace(r.Body)) {
			t.Fatalf("%s %s:\nsent   %s\nas api %s", method, path, r.Body, again)
		}
	}
	same("GET", "/admin/orders", &api.OrderPage{})
	same("GET", "/admin/orders/"+itoa(id), &api.Order{})
	same("GET", "/admin/dlq", &api.DeadLetters{})
	same("GET", "/admin/ratelimits", &api.RateLimits{})
	same("DELETE", "/admin/ratelimit/42", &api.ResetResult{})
	same("GET", "/admin/outbox", &api.Outbox{})
	same("GET", "/api/admin/stats", &api.BlogStats{})
	same("GET", "/admin/orders/999", &api.Error{})
}
