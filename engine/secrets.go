package engine

import (
	"encoding/json"
	"errors"
	"html"
	"net/url"
	"strings"
	"time"

	"github.com/hangarhq/hangar/store"
)

// SecretsConfig says which secrets must never echo and how long a root password can be
// asked for again.
type SecretsConfig struct {
	// Mask lists tokens (bot token, provider tokens, webhook secret, admin token) that
	// are masked in every error text from Telegram or a provider before it is logged,
	// stored or shown.
	Mask []string
	// PasswordWindow is how long after a server is ready its owner may ask for the root
	// password again with /password (default 15 minutes).
	PasswordWindow time.Duration
}

const defaultPasswordWindow = 15 * time.Minute

func (c SecretsConfig) window() time.Duration {
	if c.PasswordWindow > 0 {
		return c.PasswordWindow
	}
	return defaultPasswordWindow
}

// minSecretLen keeps a short configured secret from masking ordinary words.
const minSecretLen = 6

// scrubber masks secrets in texts that come from outside services: Telegram and
// cloud APIs may quote the request they refused, and a quoted request can hold a root
// password or a token.
type scrubber struct{ secrets []string }

func newScrubber(secrets ...string) scrubber {
	var s scrubber
	for _, v := range secrets {
		s.secrets = appendVariants(s.secrets, v)
	}
	return s
}

// appendVariants adds v as it may appear when quoted back: raw, HTML-escaped (our
// messages are HTML), JSON-escaped (a JSON request), and URL-encoded (a form).
func appendVariants(out []string, v string) []string {
	if len(v) < minSecretLen {
		return out
	}
	out = append(out, v)
	seen := map[string]bool{v: true}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(html.EscapeString(v))
	// JSON encoders differ on <, > and &: Go's escapes them, most others do not.
	for _, escapeHTML := range []bool{true, false} {
		add(jsonString(v, escapeHTML))
		add(jsonString(html.EscapeString(v), escapeHTML))
	}
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	return out
}

// jsonString is v as it appears inside a JSON string, without the quotes.
func jsonString(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		return v
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// text masks every known secret, and the extra ones (a message's password), in t.
func (s scrubber) text(t string, extra ...string) string {
	if t == "" {
		return t
	}
	all := s.secrets
	for _, v := range extra {
		all = appendVariants(all[:len(all):len(all)], v)
	}
	for _, v := range all {
		t = strings.ReplaceAll(t, v, store.PasswordMask)
	}
	return t
}

// scrubbedError keeps the facts the outbox classifies by (RetryAfter, Permanent) while
// its text is masked: the cause's own text is never rendered.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }

func (e *scrubbedError) RetryAfter() time.Duration {
	var ra retryAfterError
	if errors.As(e.cause, &ra) {
		return ra.RetryAfter()
	}
	return 0
}

func (e *scrubbedError) Permanent() bool {
	var pe permanentError
	if errors.As(e.cause, &pe) {
		return pe.Permanent()
	}
	return false
}

func (s scrubber) err(err error, extra ...string) error {
	if err == nil {
		return nil
	}
	return &scrubbedError{msg: s.text(err.Error(), extra...), cause: err}
}

func (e *Engine) notes() notes {
	return notes{adminChat: e.cfg.AdminChatID, catalog: e.cfg.Catalog, lang: e.bot.lang, users: e.store}
}

func (e *Engine) passwordPolicy() passwordPolicy {
	return passwordPolicy{window: e.cfg.Secrets.window(), providerChooses: func(name string) bool {
		p, ok := e.cfg.Providers[name].(interface{ ChoosesRootPassword() bool })
		return ok && p.ChoosesRootPassword()
	}}
}
