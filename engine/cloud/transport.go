package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one provider HTTP call when the caller passes no client.
const DefaultTimeout = 60 * time.Second

// exchange remembers the last HTTP answer of one provider call. The client libraries
// flatten their errors into strings (govultr drops the status entirely, linodego drops
// the cause of transport errors), so the status and Retry-After that decide retrying
// are taken from the wire instead.
type exchange struct {
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (x *exchange) record(resp *http.Response) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if resp == nil {
		x.status, x.retryAfter = 0, ""
		return
	}
	x.status, x.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
}

func (x *exchange) last() (int, string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.status, x.retryAfter
}

type exchangeKey struct{}

func withExchange(ctx context.Context) (context.Context, *exchange) {
	x := &exchange{}
	return context.WithValue(ctx, exchangeKey{}, x), x
}

// recorder is the innermost transport: it sees every attempt the library makes.
type recorder struct{ base http.RoundTripper }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if x, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		x.record(resp)
	}
	return resp, err
}

// authedClient returns a copy of hc (the caller's client is left alone) that sends the
// token as a Bearer header and records answers for classification.
func authedClient(hc *http.Client, token string) *http.Client {
	c := &http.Client{Timeout: DefaultTimeout}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = bearer{token: token, base: recorder{base: base}}
	return c
}

// bearer adds the API token. It stands in for oauth2.Transport, which logs a
// deprecation line each time http.Client's Timeout cancels a request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// classify turns a library error into an *Error. ctx is the call's context: when the
// caller cancelled it, the failure is theirs, not the provider's.
func classify(ctx context.Context, provider, op string, x *exchange, err error, red redactor) error {
	if err == nil {
		return nil
	}
	msg := red.clean(err.Error())
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Op: op, Provider: provider, Err: fmt.Errorf("%w (%s)", context.Canceled, msg)}
	}
	status, retryAfter := x.last()
	e := &Error{Op: op, Provider: provider, Status: status, Retryable: retryableStatus(status) || busy(status, msg), Err: errors.New(msg)}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.RetryAfter = parseRetryAfter(retryAfter, time.Now())
	}
	return e
}

// busy recognises Linode's answer to an action on a server busy with another one (a
// boot, a shutdown, a resize): 400 "Linode busy." It passes once the other action
// ends, so it is retried, not dead-lettered as a bad request.
func busy(status int, msg string) bool {
	return status == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "busy")
}
