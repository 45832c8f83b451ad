package logring

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every secret in a kept record.
const Mask = "••••••••"

// minSecretLen keeps a short configured secret from masking ordinary words, as the
// engine's scrubber does.
const minSecretLen = 6

// Scrubber masks the daemon's configured secrets (tokens, keys) as they may appear in
// a log line: raw, URL-encoded or JSON-escaped; and anything that reads as a password,
// a token or a bearer credential whatever its value.
type Scrubber struct{ secrets []string }

// NewScrubber masks secrets; empty and short ones are ignored.
func NewScrubber(secrets ...string) *Scrubber {
	s := &Scrubber{}
	seen := map[string]bool{}
	add := func(v string) {
		if len(v) >= minSecretLen && !seen[v] {
			seen[v] = true
			s.secrets = append(s.secrets, v)
		}
	}
	for _, v := range secrets {
		add(v)
		add(url.QueryEscape(v))
		add(url.PathEscape(v))
		if b, err := json.Marshal(v); err == nil {
			add(string(b[1 : len(b)-1]))
		}
	}
	// Longest first: a secret that contains another is masked whole.
	for i := 1; i < len(s.secrets); i++ {
		for j := i; j > 0 && len(s.secrets[j]) > len(s.secrets[j-1]); j-- {
			s.secrets[j], s.secrets[j-1] = s.secrets[j-1], s.secrets[j]
		}
	}
	return s
}

var (
	// secretPair is key=value (an attribute, a query string, JSON) where the key names
	// a credential; a password also as "password: value", as messages write it. Not
	// "token: value": prose ("no bot token: Telegram sending is off") reads so.
	secretPair = regexp.MustCompile(`(?i)((?:(?:\b(?:root[ _-]?)?(?:password|passwd|pwd)|비밀번호)\w*"?\s*[:=]|\b(?:secret|token|api[_-]?key|apikey|authorization)\w*"?(?:=|":))\s*"?)(?:bearer\s+)?([^\s",}&]+)`)
	// bearer is an Authorization header's value quoted anywhere.
	bearer = regexp.MustCompile(`(?i)(\bbearer\s+)([^\s",}]+)`)
	// botToken is a Telegram bot token, as found in an API URL (…/bot123:ABC…/send…).
	botToken = regexp.MustCompile(`\b\d{6,}:[A-Za-z0-9_-]{30,}\b`)
)

// Scrub returns t with every secret masked.
func (s *Scrubber) Scrub(t string) string {
	if t == "" {
		return t
	}
	for _, v := range s.secrets {
		t = strings.ReplaceAll(t, v, Mask)
	}
	t = secretPair.ReplaceAllString(t, "${1}"+Mask)
	t = bearer.ReplaceAllString(t, "${1}"+Mask)
	return botToken.ReplaceAllString(t, Mask)
}

// secretKey reports whether an attribute's key names a credential: its value is
// masked whole, whatever it looks like.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"password", "passwd", "secret", "token", "apikey", "api_key", "authorization"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
