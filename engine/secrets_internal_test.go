package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// The scrubber masks a secret however an outside service may quote it back.
func TestScrubberMasksEveryQuotedForm(t *testing.T) {
	const token = "123456:AAH-tok&en<x>\"q\""
	s := newScrubber(token, "short", "")
	for _, tc := range []struct{ name, text string }{
		{"raw", "bad token " + token},
		{"html", "in <code>123456:AAH-tok&amp;en&lt;x&gt;&#34;q&#34;</code>"},
		{"json", `{"token":"123456:AAH-tok&en<x>\"q\""}`},
		{"json of html", `{"text":"123456:AAH-tok\u0026amp;en\u0026lt;x\u0026gt;\u0026#34;q\u0026#34;"}`},
		{"query", "url /bot?t=123456%3AAAH-tok%26en%3Cx%3E%22q%22"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.text(tc.text)
			if !strings.Contains(got, store.PasswordMask) {
				t.Fatalf("%q was not masked: %q", tc.text, got)
			}
			if strings.Contains(got, "AAH-tok") {
				t.Fatalf("the token survives in %q", got)
			}
		})
	}
	// Short values would mask ordinary words: they are not secrets worth the noise.
	if got := s.text("a short answer"); got != "a short answer" {
		t.Fatalf("a short configured value was masked: %q", got)
	}
	// A per-message extra (the password) is masked without being kept.
	if got := s.text("pw Xy7Kp2mNq9 in text", "Xy7Kp2mNq9"); strings.Contains(got, "Xy7Kp2mNq9") {
		t.Fatalf("the extra secret survives: %q", got)
	}
	if got := s.text("pw Xy7Kp2mNq9 in text"); !strings.Contains(got, "Xy7Kp2mNq9") {
		t.Fatal("an extra secret leaked into the scrubber's own list")
	}
}

type retryLater struct{}

func (retryLater) Error() string             { return "429 for secret-token-value" }
func (retryLater) RetryAfter() time.Duration { return 3 * time.Second }

// A scrubbed error keeps what the outbox decides by.
func TestScrubbedErrorKeepsRetryAfterAndPermanent(t *testing.T) {
	s := newScrubber("secret-token-value")
	err := s.err(retryLater{})
	var ra retryAfterError
	if !errors.As(err, &ra) || ra.RetryAfter() != 3*time.Second {
		t.Fatalf("retry_after lost: %v", err)
	}
	if strings.Contains(err.Error(), "secret-token-value") {
		t.Fatalf("not masked: %v", err)
	}
	perm := s.err(permanentSendError("refused secret-token-value"))
	var pe permanentError
	if !errors.As(perm, &pe) || !pe.Permanent() {
		t.Fatalf("permanence lost: %v", perm)
	}
}
