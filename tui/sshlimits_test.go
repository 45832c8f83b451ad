package tui_test

import (
	"bufio"
	"context"
	"errors"
	"io"
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

// startLimitedSSH runs the console's SSH server with the limits under test.
func startLimitedSSH(t *testing.T, adjust func(*tui.SSHConfig)) (*tui.SSHServer, sshBundle) {
	t.Helper()
	dir := t.TempDir()
	b := sshBundle{authorized: sshtest.NewSigner(t), unknown: sshtest.NewSigner(t), hostKey: filepath.Join(dir, "ssh_host_ed25519")}
	keys := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(keys, gossh.MarshalAuthorizedKey(b.authorized.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tui.SSHConfig{
		Addr: "127.0.0.1:0", HostKeyPath: b.hostKey, AuthorizedKeysPath: keys,
		Daemon: func() (tui.Daemon, error) { return fakedaemon.New(), nil },
		Target: "loopback", Logger: slog.New(slog.DiscardHandler),
		Console: func(o *tui.Options) {
			o.Now = func() time.Time { return fakedaemon.Now }
			o.Frame = 10 * time.Millisecond
		},
	}
	adjust(&cfg)
	srv, err := tui.NewSSHServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	b.addr = srv.Addr().String()
	return srv, b
}

// closedWithin reports whether the server closes c before the deadline (reading and
// discarding whatever it sends meanwhile, such as its version line).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !errors.As(err, &ne) || !ne.Timeout()
}

// Connections that never authenticate are closed at the handshake timeout, whether
// they send nothing or start the handshake and stall: the idle timeout alone (30 min)
// let them pile up.
func TestUnauthenticatedSSHConnectionsCloseAtTheHandshakeTimeout(t *testing.T) {
	_, b := startLimitedSSH(t, func(c *tui.SSHConfig) { c.HandshakeTimeout = 300 * time.Millisecond })
	silent, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	stalled, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := io.WriteString(stalled, "SSH-2.0-stalling\r\n"); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]net.Conn{"silent": silent, "stalled handshake": stalled} {
		if !closedWithin(c, 20*time.Second) {
			t.Errorf("%s connection still open long after the handshake timeout", name)
		}
	}
}

// An operator's session outlives the handshake timeout: it only guards the handshake.
func TestAuthenticatedSessionOutlivesTheHandshakeTimeout(t *testing.T) {
	_, b := startLimitedSSH(t, func(c *tui.SSHConfig) { c.HandshakeTimeout = 200 * time.Millisecond })
	c, err := b.dial(b.authorized, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, scr, in := sshtest.Console(t, c)
	scr.WaitFor(t, "queue depth")
	time.Sleep(600 * time.Millisecond) // three handshake timeouts
	if _, err := in.Write([]byte("3")); err != nil {
		t.Fatalf("the session was closed: %v", err)
	}
	scr.WaitFor(t, "plan sold out")
}

// Beyond MaxSessions a connection is closed at once; the place is free again once a
// session ends.
func TestSSHConnectionsOverTheCapAreClosed(t *testing.T) {
	srv, b := startLimitedSSH(t, func(c *tui.SSHConfig) { c.MaxSessions = 1; c.HandshakeTimeout = time.Minute })
	first, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(first).ReadString('\n'); !strings.HasPrefix(line, "SSH-2.0-") {
		t.Fatalf("first connection read %q, %v; want the server's version", line, err)
	}
	over, err := net.Dial("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := over.Read(make([]byte, 64)); err != io.EOF {
		t.Fatalf("over the cap: read %d bytes, %v; want the connection closed", n, err)
	}
	first.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for srv.Sessions() > 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	c, err := b.dial(b.authorized, nil)
	if err != nil {
		t.Fatalf("after the first closed, an operator could not connect: %v", err)
	}
	c.Close()
}
