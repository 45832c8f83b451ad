package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/user"
)

// roleConfig is who may look at the daemon without changing it, and the token the
// daemon's own SSH console uses (issue 16).
type roleConfig struct {
	ViewerToken string
	ViewerKeys  string
	// console is the SSH console's bearer: random, made at each start, never shown,
	// so that only this process can vouch for an SSH key's role and person.
	console string
}

func addRoleFlags(f *envFlags, c *roleConfig) {
	f.Secret(&c.ViewerToken, "viewer-token", "HANGAR_VIEWER_TOKEN", "read-only admin API bearer: sees everything, every change is refused 403 read_only (unset: no viewer token)")
	f.String(&c.ViewerKeys, "viewer-keys", "HANGAR_VIEWER_KEYS", "", "OpenSSH authorized_keys file of console viewers, who see everything and change nothing; a key also in --authorized-keys is a viewer (default DATA_DIR/viewer_keys)")
}

func (c roleConfig) validate(adminToken string) error {
	var errs []error
	if c.ViewerToken != "" && len(c.ViewerToken) < 16 {
		errs = append(errs, errors.New("--viewer-token must be at least 16 characters"))
	}
	if c.ViewerToken != "" && c.ViewerToken == adminToken {
		errs = append(errs, errors.New("--viewer-token must differ from --admin-token: the same token cannot be read-only and full power"))
	}
	return errors.Join(errs...)
}

// newConsoleToken makes the SSH console's bearer for this run.
func newConsoleToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// localActor names the person at a local console, user@host, for the audit log.
func localActor() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}
