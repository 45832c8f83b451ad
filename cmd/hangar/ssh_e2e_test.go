package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// TestServeOffersTheConsoleOverSSH checks the wiring in serve: the host key is made in
// the data directory, keys in DATA_DIR/authorized_keys get the console, live from this
// daemon's admin API, and other keys are turned away.
func TestServeOffersTheConsoleOverSSH(t *testing.T) {
	dataDir := t.TempDir()
	operator, stranger := newTestSigner(t), newTestSigner(t)
	if err := os.WriteFile(filepath.Join(dataDir, "authorized_keys"), gossh.MarshalAuthorizedKey(operator.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	sshAddr := freeAddr(t)
	startDaemon(t, dataDir, "HANGAR_SSH_ADDR="+sshAddr)
	if _, err := os.Stat(filepath.Join(dataDir, "ssh_host_ed25519")); err != nil {
		t.Fatalf("no host key in the data directory: %v", err)
	}
	dial := func(s gossh.Signer) (*gossh.Client, error) {
		return gossh.Dial("tcp", sshAddr, &gossh.ClientConfig{
			User: "operator", Auth: []gossh.AuthMethod{gossh.PublicKeys(s)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second,
		})
	}
	if c, err := dial(stranger); err == nil {
		c.Close()
		t.Fatal("a key not in authorized_keys got in")
	}
	c, err := dial(operator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	sess.Stdout = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return screen.Write(p)
	})
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 110, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	shows := func(want string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(screen.String(), want)
	}
	waitScreen := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !shows(want) {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("the SSH console never showed %q:\n%q", want, screen.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// wish asks the terminal for its background first; answer as a terminal would.
	waitScreen("\x1b]11;?")
	if _, err := in.Write([]byte("\x1b]11;rgb:0000/0000/0000\x07\x1b[?62;c")); err != nil {
		t.Fatal(err)
	}
	waitScreen("queue depth")
	if shows("unreachable") || shows("refused the console") {
		t.Fatal("the SSH console cannot reach its own daemon")
	}
	if _, err := in.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func newTestSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
