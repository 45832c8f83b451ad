package http_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// isJSONError checks the one error shape: JSON content, {"error","code"} with code want.
func isJSONError(t *testing.T, r hangartest.Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d (%s)", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("content type %q, want application/json (%s)", ct, r.Body)
	}
	var e struct{ Error, Code string }
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == "" || e.Code != code {
		t.Fatalf("body %s: want {\"error\": a sentence, \"code\": %q}", r.Body, code)
	}
}

func TestUnknownAndDisallowedMethodsAnswerJSON(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	cases := []struct {
		method, path string
		status       int
		code         string
	}{
		{"PROPFIND", "/health", 501, "method_not_implemented"},
		{"MKCOL", "/admin/queue", 501, "method_not_implemented"},
		{"BREW", "/no/such/route", 501, "method_not_implemented"},
		{http.MethodDelete, "/health", 405, "method_not_allowed"},
		{http.MethodGet, "/no/such/route", 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			isJSONError(t, hangartest.Do(t, c.method, env.URL+c.path, nil), c.status, c.code)
		})
	}
}

// A chunked body over --max-body is answered 413 in JSON, and the client that is still
// sending it is not reset before it reads the answer (fasthttp stops reading at the
// limit and closes; unread input would turn the close into a reset).
func TestChunkedBodyOverTheLimitIsAnswered413(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{MaxBody: 64 << 10})
	c, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "POST /admin/users/7/deposit HTTP/1.1\r\nHost: hangar\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", hangartest.AdminToken)
	writeErr := make(chan error, 1)
	go func() {
		chunk := strings.Repeat("7", 8<<10)
		for range 256 { // 2 MiB, thirty-two times the limit
			if _, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				writeErr <- err
				return
			}
		}
		_, err := io.WriteString(c, "0\r\n\r\n")
		writeErr <- err
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to an oversize chunked body: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	isJSONError(t, hangartest.Response{Status: resp.StatusCode, Body: body, Header: resp.Header}, 413, "body_too_large")
	if err := <-writeErr; err != nil {
		t.Fatalf("the client was reset while sending: %v", err)
	}
	if b, err := env.Store.GetBalance(7); err != nil || b.Available != 0 {
		t.Fatalf("balance after a refused deposit = %+v, %v; want nothing stored", b, err)
	}
}

// A store that cannot write answers 503 store_unavailable on every route that needs it,
// deposit included (it used to answer 500), and the public health says unavailable
// without the error text, which the admin's detailed health keeps.
func TestStoreFailureAnswers503Everywhere(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 5, 1000)
	if err := env.Store.Close(); err != nil {
		t.Fatal(err)
	}
	// Env.Stop closes env.Store again, which a closed store does not allow: hand it a
	// store of its own to close. The server keeps the closed one.
	spare, err := store.Open(store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	env.Store = spare
	cases := []struct {
		name, method, path, body string
		bearer                   string
	}{
		{"deposit", http.MethodPost, "/admin/users/5/deposit", `{"amount":10}`, hangartest.AdminToken},
		{"balance", http.MethodGet, "/admin/users/5", "", hangartest.AdminToken},
		{"orders", http.MethodGet, "/admin/orders", "", hangartest.AdminToken},
		{"dead letters", http.MethodGet, "/admin/dlq", "", hangartest.AdminToken},
		{"outbox", http.MethodGet, "/admin/outbox", "", hangartest.AdminToken},
		{"create order", http.MethodPost, "/orders", `{"user_id":5,"telegram_user_id":"5","spec_id":"sim-nano","region":"tokyo"}`, hangartest.WebhookSecret},
		{"order status", http.MethodGet, "/status/1", "", hangartest.WebhookSecret},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			r := hangartest.Do(t, c.method, env.URL+c.path, body, "Authorization", "Bearer "+c.bearer)
			isJSONError(t, r, 503, "store_unavailable")
		})
	}

	r := hangartest.Do(t, http.MethodGet, env.URL+"/health", nil)
	if r.Status != 503 || string(r.Body) != `{"status":"unavailable"}` {
		t.Fatalf("public health = %d %s, want 503 and the status alone", r.Status, r.Body)
	}
	d := env.Admin(t, http.MethodGet, "/admin/health", nil)
	if d.Status != 503 || !strings.Contains(string(d.Body), `"store":"error"`) || !strings.Contains(string(d.Body), "store:") {
		t.Fatalf("detailed health = %d %s, want 503 with the store's error", d.Status, d.Body)
	}
}
