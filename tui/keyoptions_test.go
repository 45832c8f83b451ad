package tui

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestKeyOptionsAllow(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local)
	from := &net.TCPAddr{IP: net.ParseIP("198.51.100.7"), Port: 52000}
	from6 := &net.TCPAddr{IP: net.ParseIP("2001:db8::5"), Port: 52000}
	cases := []struct {
		name    string
		options []string
		remote  net.Addr
		refuse  string // "" when allowed
	}{
		{"no options", nil, from, ""},
		{"restrictions of what the console never offers", []string{"no-port-forwarding", "no-agent-forwarding", "no-X11-forwarding", "no-user-rc"}, from, ""},
		{"restrict, then pty", []string{"restrict", "pty"}, from, ""},
		{"restrict alone: no terminal", []string{"restrict"}, from, "no terminal"},
		{"from= the address", []string{`from="198.51.100.7"`}, from, ""},
		{"from= a glob", []string{`from="198.51.100.*"`}, from, ""},
		{"from= a CIDR block", []string{`from="198.51.100.0/24"`}, from, ""},
		{"from= an IPv6 block", []string{`from="2001:db8::/32"`}, from6, ""},
		{"from= another address", []string{`from="203.0.113.7"`}, from, "does not include"},
		{"from= a list with the address negated", []string{`from="198.51.100.0/24,!198.51.100.7"`}, from, "excludes"},
		{"from= a host name is never looked up", []string{`from="*.example.com"`}, from, "does not include"},
		{"expiry in the future", []string{`expiry-time="20270101"`}, from, ""},
		{"expired", []string{`expiry-time="202612021159"`}, from, "expired"},
		{"expiry unreadable", []string{`expiry-time="tomorrow"`}, from, "expiry-time"},
		{"a forced command", []string{`command="uptime"`}, from, "not supported"},
		{"no-pty", []string{"no-pty"}, from, "not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := keyOptionsAllow(tc.options, tc.remote, now)
			switch {
			case tc.refuse == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refuse != "" && (err == nil || !strings.Contains(err.Error(), tc.refuse)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refuse)
			}
		})
	}
}
