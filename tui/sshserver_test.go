package tui_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

type sshBundle struct {
	addr       string
	authorized gossh.Signer
	unknown    gossh.Signer
	hostKey    string
}

func newSigner(t *testing.T) gossh.Signer {
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

func setupSSH(t *testing.T) sshBundle {
	t.Helper()
	dir := t.TempDir()
	b := sshBundle{authorized: newSigner(t), unknown: newSigner(t), hostKey: filepath.Join(dir, "ssh_host_ed25519")}
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
	return gossh.Dial("tcp", b.addr, &gossh.ClientConfig{
		User:            "operator",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		BannerCallback: func(msg string) error {
			if banner != nil {
				*banner += msg
			}
			return nil
		},
		Timeout: 5 * time.Second,
	})
}

// screen collects a session's output and lets a test wait for text in it.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
	got chan struct{}
}

func newScreen(r io.Reader) *screen {
	s := &screen{got: make(chan struct{}, 1)}
	go func() {
		p := make([]byte, 4096)
		for {
			n, err := r.Read(p)
			s.mu.Lock()
			s.buf.Write(p[:n])
			s.mu.Unlock()
			select {
			case s.got <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *screen) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		ok, text := strings.Contains(s.buf.String(), want), s.buf.String()
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.got:
		case <-deadline:
			t.Fatalf("screen never showed %q; got:\n%q", want, text)
		}
	}
}

func TestSSHAuthorizedKeyGetsOverview(t *testing.T) {
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
	out, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
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
	scr := newScreen(out)
	// wish asks the terminal for its background colour before the program starts;
	// answer as a terminal would (dark background, then the device attributes).
	scr.waitFor(t, "\x1b]11;?")
	if _, err := in.Write([]byte("\x1b]11;rgb:0000/0000/0000\x07\x1b[?62;c")); err != nil {
		t.Fatal(err)
	}
	scr.waitFor(t, "queue depth")
	scr.waitFor(t, "consumer lag")
	if _, err := in.Write([]byte("3")); err != nil {
		t.Fatal(err)
	}
	scr.waitFor(t, "plan sold out")
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
			User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(newSigner(t))},
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
