package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hangarhq/hangar/internal/sshtest"

	gossh "golang.org/x/crypto/ssh"
)

// TestServeOffersTheConsoleOverSSH checks the wiring in serve: the host key is made in
// the data directory, keys in DATA_DIR/authorized_keys get the console, live from this
// daemon's admin API, and other keys are turned away.
func TestServeOffersTheConsoleOverSSH(t *testing.T) {
	dataDir := t.TempDir()
	operator, stranger := sshtest.NewSigner(t), sshtest.NewSigner(t)
	if err := os.WriteFile(filepath.Join(dataDir, "authorized_keys"), gossh.MarshalAuthorizedKey(operator.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	sshAddr := freeAddr(t)
	startDaemon(t, dataDir, "HANGAR_SSH_ADDR="+sshAddr)
	if _, err := os.Stat(filepath.Join(dataDir, "ssh_host_ed25519")); err != nil {
		t.Fatalf("no host key in the data directory: %v", err)
	}
	if c, err := sshtest.Dial(sshAddr, stranger, nil); err == nil {
		c.Close()
		t.Fatal("a key not in authorized_keys got in")
	}
	c, err := sshtest.Dial(sshAddr, operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, scr, in := sshtest.Console(t, c)
	scr.WaitFor(t, "queue depth")
	if scr.Shows("unreachable") || scr.Shows("refused the console") {
		t.Fatal("the SSH console cannot reach its own daemon")
	}
	if _, err := in.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
}
