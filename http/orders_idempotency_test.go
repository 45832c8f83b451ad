package http_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// A client whose POST /orders timed out cannot tell whether the order was made, so it
// sends the same request again with the same Idempotency-Key: the second answer is the
// first order (200), and nothing is stored or held twice. The key is the user's: the
// same key from another user makes an order of its own; reused for another request it
// is refused (409), and a key that is not a header-safe token is refused (400).
func TestRetriedOrderWithIdempotencyKeyHoldsOnce(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	pause(t, env)
	env.Deposit(t, 7, 10000)
	env.Deposit(t, 8, 10000)
	post := func(body, key string) hangartest.Response {
		return hangartest.Do(t, http.MethodPost, env.URL+"/orders", []byte(body),
			"Authorization", "Bearer "+hangartest.WebhookSecret, "Idempotency-Key", key)
	}
	const (
		tokyo = `{"user_id":7,"telegram_user_id":"7","spec_id":"sim-nano","region":"tokyo"}`
		other = `{"user_id":7,"telegram_user_id":"7","spec_id":"sim-nano","region":"seoul"}`
		user8 = `{"user_id":8,"telegram_user_id":"8","spec_id":"sim-nano","region":"tokyo"}`
	)
	idOf := func(r hangartest.Response) int64 {
		var out struct {
			OrderID int64 `json:"order_id"`
		}
		r.JSON(t, &out)
		return out.OrderID
	}
	first := post(tokyo, "order-7-attempt-1")
	again := post(tokyo, "order-7-attempt-1")
	if first.Status != http.StatusCreated || again.Status != http.StatusOK || idOf(first) != idOf(again) {
		t.Fatalf("first %d %s, retry %d %s: want 201 then 200 with the same order", first.Status, first.Body, again.Status, again.Body)
	}
	if r := post(other, "order-7-attempt-1"); r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "idempotency_conflict") {
		t.Fatalf("the key reused for another region: %d %s, want 409 idempotency_conflict", r.Status, r.Body)
	}
	if r := post(user8, "order-7-attempt-1"); r.Status != http.StatusCreated || idOf(r) == idOf(first) {
		t.Fatalf("the same key from another user: %d %s, want an order of its own", r.Status, r.Body)
	}
	for _, bad := range []string{strings.Repeat("k", 256), "tab\there"} {
		if r := post(tokyo, bad); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "bad_idempotency_key") {
			t.Fatalf("Idempotency-Key %q: %d %s, want 400 bad_idempotency_key", bad, r.Status, r.Body)
		}
	}
	orders, _ := env.Store.ListOrders("", 10, 0)
	b, _ := env.Store.GetBalance(7)
	if len(orders) != 2 || b.Held != 5000 || b.Available != 5000 {
		t.Fatalf("%d orders stored, user 7's balance %+v; want 2 orders and user 7's 5000 held once", len(orders), b)
	}
}

func pause(t *testing.T, env *hangartest.Env) {
	t.Helper()
	if _, _, err := env.Engine.PauseQueue("test"); err != nil {
		t.Fatal(err)
	}
}
