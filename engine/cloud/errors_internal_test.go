package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClassification(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		err                  error
		retryable, permanent bool
	}{
		{name: "nil", err: nil},
		{name: "cancelled", err: context.Canceled},
		{name: "cancelled inside an Error", err: &Error{Op: "create", Provider: "sim", Err: context.Canceled}},
		{name: "cancelled, wrapped", err: fmt.Errorf("order 7: %w", &Error{Err: context.Canceled})},
		{name: "deadline", err: context.DeadlineExceeded, retryable: true},
		{name: "unknown error", err: errors.New("boom"), retryable: true},
		{name: "retryable Error", err: &Error{Status: 503, Retryable: true}, retryable: true},
		{name: "permanent Error", err: &Error{Status: 400}, permanent: true},
		{name: "permanent Error, wrapped", err: fmt.Errorf("order 7: %w", &Error{Status: 402}), permanent: true},
	} {
		if got := IsRetryable(tc.err); got != tc.retryable {
			t.Errorf("%s: IsRetryable = %v", tc.name, got)
		}
		if got := IsPermanent(tc.err); got != tc.permanent {
			t.Errorf("%s: IsPermanent = %v", tc.name, got)
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for status, want := range map[int]bool{
		0: true, 200: true, 400: false, 401: false, 402: false, 403: false, 404: false,
		408: true, 422: false, 429: true, 500: true, 502: true, 503: true, 504: true,
	} {
		if got := retryableStatus(status); got != want {
			t.Errorf("retryableStatus(%d) = %v", status, got)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 24, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":     0,
		"7":    7 * time.Second,
		" 0 ":  0,
		"-3":   0,
		"soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRedactor(t *testing.T) {
	const pass = `p"a\ss<>&`
	r := newRedactor("tok-123", pass, "")
	escaped := `p\"a\\ss\u003c\u003e\u0026`
	msg := r.clean(`auth tok-123 body {"root_pass":"` + escaped + `"} raw ` + pass)
	for _, secret := range []string{"tok-123", pass, escaped} {
		if strings.Contains(msg, secret) {
			t.Errorf("%q still holds %q", msg, secret)
		}
	}
}
