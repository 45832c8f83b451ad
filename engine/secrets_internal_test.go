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

// The ready message carries the password only in memory: stored with a placeholder
// the sender fills in, sent in clear with a masked log copy, or told lost.
func TestReadyMessageKeepsThePasswordOutOfWhatIsStored(t *testing.T) {
	o := store.Order{ID: 42, ChatID: 7, TelegramUserID: 7, SpecID: "g6-nanode-1", Region: "ap-northeast", IPAddress: "192.0.2.9"}
	const pw = "Xy7<Kp2mNq9"
	for _, tc := range []struct {
		name, password     string
		transient          bool
		secretOrder        int64
		textHas, textLacks string
		logHas             string
	}{
		{name: "re-derived at send time", password: "", secretOrder: 42,
			textHas: store.RootPasswordPlaceholder, textLacks: pw},
		{name: "chosen by the provider", password: pw, transient: true,
			textHas: "Xy7&lt;Kp2mNq9", textLacks: store.RootPasswordPlaceholder, logHas: store.PasswordMask},
		{name: "lost", password: passwordUnknown,
			textLacks: store.RootPasswordPlaceholder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, transient := notes{}.ready(o, tc.password)
			if transient != tc.transient || msg.SecretOrderID != tc.secretOrder {
				t.Fatalf("transient %v secret order %d, want %v %d", transient, msg.SecretOrderID, tc.transient, tc.secretOrder)
			}
			if !strings.Contains(msg.Text, "192.0.2.9") || (tc.textHas != "" && !strings.Contains(msg.Text, tc.textHas)) {
				t.Fatalf("text %q lacks the address or %q", msg.Text, tc.textHas)
			}
			if strings.Contains(msg.Text, tc.textLacks) || strings.Contains(msg.Text, "\x00") {
				t.Fatalf("text %q holds %q", msg.Text, tc.textLacks)
			}
			if strings.Contains(msg.LogText, "Kp2mNq9") || (tc.logHas != "" && !strings.Contains(msg.LogText, tc.logHas)) {
				t.Fatalf("log text %q", msg.LogText)
			}
			if tc.logHas == "" && msg.LogText != "" {
				t.Fatalf("a log text %q where the stored text serves", msg.LogText)
			}
		})
	}
}
