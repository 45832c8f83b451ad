package tui

import (
	"net"
	"testing"
	"time"
)

// sshd(8) reads a key's options in order (auth-options.c, sshauthopt_parse): restrict
// switches the pty off when it is read, and a pty read before it is switched off with
// the rest. "pty,restrict" therefore grants no terminal in OpenSSH, as "restrict"
// alone does (which the console refuses); keyOptionsAllow looks only at whether both
// words appear, and lets the key into the console.
func TestKeyOptionsPtyBeforeRestrictGrantsNoTerminal(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	from := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 40000}
	if err := keyOptionsAllow([]string{"restrict"}, from, now); err == nil {
		t.Fatal("restrict alone was accepted; the premise of this test is that it is refused")
	}
	if err := keyOptionsAllow([]string{"pty", "restrict"}, from, now); err == nil {
		t.Error(`"pty,restrict" was accepted for the console; sshd reads restrict after pty and gives the key no terminal, so it must be refused like "restrict" alone`)
	}
	if err := keyOptionsAllow([]string{"restrict", "pty"}, from, now); err != nil {
		t.Errorf(`"restrict,pty" refused: %v`, err)
	}
}
