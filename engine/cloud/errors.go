package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is a failed provider call with what the queue needs to decide its fate.
type Error struct {
	Op       string // "create", "find", "get", "delete"
	Provider string // "linode", "vultr", "sim"
	// Status is the provider's HTTP status, 0 when no answer arrived (timeout,
	// connection refused, cancelled).
	Status    int
	Retryable bool
	// RetryAfter is the provider's Retry-After on a 429 (or 503), zero when absent.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s %s: status %d: %v", e.Provider, e.Op, e.Status, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Provider, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports a failure that may succeed later: no answer (timeout, connection
// error), 408, 429 or 5xx. Errors from outside this package count as retryable so that
// an unexpected failure is bounded by the queue's retries rather than dropped. A
// cancellation by the caller is never retryable.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Retryable
	}
	return true
}

// IsPermanent reports a refusal that retrying cannot fix: a 4xx such as an invalid
// plan or region, a bad token, or an unpaid account.
func IsPermanent(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	e, ok := errors.AsType[*Error](err)
	return ok && !e.Retryable
}

// IsNotFound reports a provider's 404 for an instance.
func IsNotFound(err error) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Status == http.StatusNotFound
}

// RetryAfter is the provider's requested wait before the next attempt, zero when it
// named none.
func RetryAfter(err error) time.Duration {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.RetryAfter
	}
	return 0
}

// retryableStatus decides by the last HTTP status of a failed call. Below 400 the
// failure happened after or instead of an answer (no answer at all, a body cut off by
// a timeout, a malformed body): worth another try.
func retryableStatus(status int) bool {
	switch {
	case status < 400:
		return true
	case status == http.StatusRequestTimeout, status == http.StatusTooEarly, status == http.StatusTooManyRequests:
		return true
	case status >= 500:
		return true
	}
	return false
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// redactor removes secrets from text bound for an error. Besides the raw value it
// removes the JSON-escaped form, because a provider may echo a request body back.
type redactor []string

func newRedactor(secrets ...string) redactor {
	var r redactor
	for _, s := range secrets {
		if s == "" {
			continue
		}
		r = append(r, s)
		if b, err := json.Marshal(s); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != s {
				r = append(r, esc)
			}
		}
	}
	return r
}

func (r redactor) clean(s string) string {
	for _, secret := range r {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	return s
}
