package tui_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/internal/sshtest"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

type sshBundle struct {
	addr       string
	authorized gossh.Signer
	unknown    gossh.Signer
	hostKey    string
}

func setupSSH(t *testing.T) sshBundle {
	t.Helper()
	dir := t.TempDir()
	b := sshBundle{authorized: sshtest.NewSigner(t), unknown: sshtest.NewSigner(t), hostKey: filepath.Join(dir, "ssh_host_ed25519")}
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, append([]byte("# operators\n"), gossh.MarshalAuthorizedKey(b.authorized.PublicKey())...), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := tui.NewSSHServer(tui.SSHConfig{
		Addr:               "127.0.0.1:0",
		HostKeyPath:        b.hostKey,
		AuthorizedKeysPath: keys,
		Daemon:             func() (tui.Daemon, error) { return fakedaemon.New(), nil },
		Target:             "loopback",
		Logger:             slog.New(slog.DiscardHandler),
		Console: func(o *tui.Options) {
			o.Now = func() time.Time { return fakedaemon.Now }
			o.Frame = 10 * time.Millisecond
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	b.addr = srv.Addr().String()
	return b
}

func (b sshBundle) dial(signer gossh.Signer, banner *string) (*gossh.Client, error) {
	return sshtest.Dial(b.addr, signer, banner)
}

func TestSSHAuthorizedKeyGetsOverview(t *testing.T) {
	b := setupSSH(t)
	c, err := b.dial(b.authorized, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, scr, in := sshtest.Console(t, c)
	scr.WaitFor(t, "queue depth")
	scr.WaitFor(t, "consumer lag")
	if _, err := in.Write([]byte("3")); err != nil {
		t.Fatal(err)
	}
	scr.WaitFor(t, "plan sold out")
	if _, err := in.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("session did not end after q")
	}
	if _, err := os.Stat(b.hostKey); err != nil {
		t.Fatalf("host key not kept: %v", err)
	}
}

func TestSSHUnknownKeyRefused(t *testing.T) {
	b := setupSSH(t)
	var banner string
	c, err := b.dial(b.unknown, &banner)
	if err == nil {
		c.Close()
		t.Fatal("unknown key was let in")
	}
	if !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(banner, "authorized_keys") {
		t.Errorf("client saw no explanation; banner = %q", banner)
	}
}

func TestSSHWithoutPTYRefused(t *testing.T) {
	b := setupSSH(t)
	c, err := b.dial(b.authorized, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.CombinedOutput("")
	if err == nil {
		t.Error("session without a PTY exited 0")
	}
	if !strings.Contains(string(out), "PTY") {
		t.Errorf("output = %q", out)
	}
}

func TestSSHHostKeyKeptAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "authorized_keys")
	os.WriteFile(keys, nil, 0o600)
	var seen []string
	for range 2 {
		srv, err := tui.NewSSHServer(tui.SSHConfig{
			Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(dir, "host_key"), AuthorizedKeysPath: keys,
			Daemon: func() (tui.Daemon, error) { return fakedaemon.New(), nil }, Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		var hostKey string
		_, _ = gossh.Dial("tcp", srv.Addr().String(), &gossh.ClientConfig{
			User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(sshtest.NewSigner(t))},
			HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error {
				hostKey = gossh.FingerprintSHA256(k)
				return nil
			},
		})
		srv.Shutdown(context.Background())
		seen = append(seen, hostKey)
	}
	if seen[0] == "" || seen[0] != seen[1] {
		t.Fatalf("host keys = %v, want the same key twice", seen)
	}
}

// TestSSHSilentTerminalDrawsAtOnce: a terminal that answers no query (script, the
// Linux console) still gets the console drawn at once, and its first key is a key.
func TestSSHSilentTerminalDrawsAtOnce(t *testing.T) {
	b := setupSSH(t)
	c, err := b.dial(b.authorized, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, scr, in := sshtest.SilentConsole(t, c)
	// A drawing bound, not a speed claim: without an answer the old session waited for
	// the terminal (for ever, or until a key press it then swallowed).
	scr.WaitForWithin(t, "queue depth", time.Second)
	if _, err := in.Write([]byte("3")); err != nil {
		t.Fatal(err)
	}
	scr.WaitForWithin(t, "plan sold out", 2*time.Second)
}
