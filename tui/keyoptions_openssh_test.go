package tui

import (
	"net"
	"testing"
	"time"
)

// Keys an operator reasonably has in an OpenSSH authorized_keys file, which the
// console let in before keyOptionsAllow and now refuses:
//   - "restrict,pty" is sshd(8)'s own recipe for "an interactive login and nothing
//     else" (restrict takes everything away, pty gives the terminal back). "restrict"
//     alone is accepted, yet adding "pty" — which only grants the terminal the console
//     needs anyway — gets the key refused as "not supported".
//   - expiry-time="YYYYMMDD[HHMM[SS]]Z": sshd(8) reads a trailing Z as UTC
//     ("Dates and times will be interpreted in the system time zone unless suffixed by
//     a Z character"); parseExpiry calls it unreadable and refuses a key that has not
//     expired.
func TestKeyOptionsOpenSSHAccepts(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	from := &net.TCPAddr{IP: net.ParseIP("198.51.100.7"), Port: 52000}
	cases := []struct {
		name    string
		options []string
	}{
		{"restrict,pty (interactive only)", []string{"restrict", "pty"}},
		{"expiry-time as a UTC date", []string{`expiry-time="20301231Z"`}},
		{"expiry-time as a UTC time", []string{`expiry-time="203012312359Z"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := keyOptionsAllow(tc.options, from, now); err != nil {
				t.Fatalf("options %q refused: %v (OpenSSH accepts this key line and the console did before)", tc.options, err)
			}
		})
	}
}
