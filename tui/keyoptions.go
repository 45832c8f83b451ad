package tui

import (
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"
)

// keyOptionsAllow applies a key's authorized_keys options (sshd(8), AUTHORIZED_KEYS
// FILE FORMAT) to a login from remote at now. The files are in OpenSSH's format, so an
// operator who writes from="…" or expiry-time="…" expects them kept: they are. Options
// that only restrict what the console never offers (forwarding, X11, agent, user rc)
// are accepted as they are; any other (command=, no-pty, principals=, …) would change
// what the key may do in a way the console cannot honour, so the key is refused rather
// than let in with more than its line grants.
func keyOptionsAllow(options []string, remote net.Addr, now time.Time) error {
	// restrict switches everything off, the terminal included; a pty after it (in
	// the line's order, as sshd reads it) gives the terminal back: without one the key
	// may not have a console.
	terminal := true
	for _, opt := range options {
		switch strings.ToLower(opt) {
		case "restrict":
			terminal = false
		case "pty":
			terminal = true
		}
	}
	if !terminal {
		return fmt.Errorf("restrict without a pty after it allows no terminal, and the console is one")
	}
	for _, opt := range options {
		name, value, hasValue := strings.Cut(opt, "=")
		name = strings.ToLower(name)
		if hasValue {
			value = strings.Trim(value, `"`)
		}
		switch name {
		case "restrict", "no-port-forwarding", "no-agent-forwarding", "no-x11-forwarding", "no-user-rc",
			"pty", "port-forwarding", "agent-forwarding", "x11-forwarding", "user-rc", "no-touch-required":
			// Restrictions of what the console never offers, and their undoing after
			// restrict: the console is a terminal and nothing else.
		case "from":
			if err := fromAllows(value, remote); err != nil {
				return err
			}
		case "expiry-time":
			until, err := parseExpiry(value)
			if err != nil {
				return fmt.Errorf("expiry-time=%q: %w", value, err)
			}
			if !now.Before(until) {
				return fmt.Errorf("the key expired at %s", until.Format(time.RFC3339))
			}
		default:
			return fmt.Errorf("option %q is not supported by the console", name)
		}
	}
	return nil
}

// fromAllows matches the client's address against a from= pattern list: globs (* ?)
// or CIDR blocks, a leading ! negating one; a negated match refuses, and some positive
// pattern must match. Host names are not looked up: only addresses match.
func fromAllows(list string, remote net.Addr) error {
	ap, err := netip.ParseAddrPort(remote.String())
	if err != nil {
		return fmt.Errorf("from=: the client's address %q is not an IP address", remote.String())
	}
	ip := ap.Addr().Unmap()
	matched := false
	for _, pat := range strings.Split(list, ",") {
		pat = strings.TrimSpace(pat)
		neg := strings.HasPrefix(pat, "!")
		pat = strings.TrimPrefix(pat, "!")
		if !patternMatches(pat, ip) {
			continue
		}
		if neg {
			return fmt.Errorf("from=%q excludes %s", list, ip)
		}
		matched = true
	}
	if !matched {
		return fmt.Errorf("from=%q does not include %s", list, ip)
	}
	return nil
}

func patternMatches(pat string, ip netip.Addr) bool {
	if p, err := netip.ParsePrefix(pat); err == nil {
		return p.Contains(ip)
	}
	ok, err := path.Match(pat, ip.String())
	return err == nil && ok
}

// parseExpiry reads YYYYMMDD[HHMM[SS]] in the server's local time, or in UTC with a
// trailing Z, as sshd does.
func parseExpiry(v string) (time.Time, error) {
	loc := time.Local
	if u, ok := strings.CutSuffix(v, "Z"); ok {
		v, loc = u, time.UTC
	}
	if _, err := strconv.ParseUint(v, 10, 64); err != nil {
		return time.Time{}, fmt.Errorf("not YYYYMMDD[HHMM[SS]]")
	}
	layouts := map[int]string{8: "20060102", 12: "200601021504", 14: "20060102150405"}
	layout, ok := layouts[len(v)]
	if !ok {
		return time.Time{}, fmt.Errorf("not YYYYMMDD[HHMM[SS]]")
	}
	return time.ParseInLocation(layout, v, loc)
}
