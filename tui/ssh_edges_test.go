package tui_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/internal/sshtest"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

// edgeSSH runs the console's SSH server with one viewer key and counts the consoles
// (daemon clients) it builds.
type edgeSSH struct {
	srv      *tui.SSHServer
	addr     string
	viewer   gossh.Signer
	consoles atomic.Int64
}

func startEdgeSSH(t *testing.T, adjust func(*tui.SSHConfig)) *edgeSSH {
	t.Helper()
	dir := t.TempDir()
	r := &edgeSSH{viewer: sshtest.NewSigner(t)}
	operators := filepath.Join(dir, "authorized_keys")
	viewers := filepath.Join(dir, "viewer_keys")
	if err := os.WriteFile(operators, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(viewers, gossh.MarshalAuthorizedKey(r.viewer.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tui.SSHConfig{
		Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(dir, "ssh_host_ed25519"),
		AuthorizedKeysPath: operators, ViewerKeysPath: viewers,
		DaemonFor: func(id tui.Identity) (tui.Daemon, error) {
			r.consoles.Add(1)
			d := fakedaemon.New()
			d.SetWho(id.Role, id.Actor())
			return d, nil
		},
		Target: "loopback", Logger: slog.New(slog.DiscardHandler),
		HandshakeTimeout: time.Minute,
		Console: func(o *tui.Options) {
			o.Now = func() time.Time { return fakedaemon.Now }
			o.Frame = 10 * time.Millisecond
		},
	}
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := tui.NewSSHServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	r.srv, r.addr = srv, srv.Addr().String()
	return r
}

// --max-ssh-sessions is the console's budget of SSH sessions ("more are closed"); each
// session is a Bubble Tea program with its own daemon client, event stream and
// refresh loop. The cap counts TCP connections only, and SSH multiplexes: one
// authenticated connection (a viewer's, here) opens as many session channels as it
// likes, each a full console, so a cap of 1 admits any number of consoles.
func TestOneSSHConnectionOpensOneConsole(t *testing.T) {
	const maxSessions = 1
	r := startEdgeSSH(t, func(c *tui.SSHConfig) { c.MaxSessions = maxSessions })
	c, err := sshtest.Dial(r.addr, r.viewer, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const channels = 12
	opened := 0
	for range channels {
		sess, err := c.NewSession()
		if err != nil {
			break // the server refused another session channel: the cap holds
		}
		defer sess.Close()
		out, err := sess.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		if err := sess.RequestPty("xterm-256color", 30, 110, gossh.TerminalModes{}); err != nil {
			break
		}
		if err := sess.Shell(); err != nil {
			break
		}
		opened++
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.consoles.Load() < int64(opened) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.consoles.Load(); n > maxSessions {
		t.Fatalf("with --max-ssh-sessions=%d one SSH connection ran %d consoles at once (%d session channels accepted, %d open connections counted)",
			maxSessions, n, opened, r.srv.Sessions())
	}
}

// windowChange sends an SSH "window-change" request, as a terminal does when resized
// (RFC 4254 6.7): columns, rows, then the size in pixels.
func windowChange(t *testing.T, s *gossh.Session, cols, rows uint32) {
	t.Helper()
	payload := make([]byte, 16)
	binary.BigEndian.PutUint32(payload[0:], cols)
	binary.BigEndian.PutUint32(payload[4:], rows)
	if _, err := s.SendRequest("window-change", false, payload); err != nil {
		t.Fatal(err)
	}
}

// The console renders whatever size the SSH client claims: every frame is built at
// columns × rows and sent. A window-change of 5000 × 5000 (the protocol allows up to
// 2^32 each) makes the daemon build and send frames of about 25 MB, and one of
// 20000 × 20000 about 400 MB each, past the daemon's whole --memory-limit (256 MiB)
// with the bot, the queue and the store in the same process. Any key, a viewer's
// included, can do it. No real terminal is that large: the size must be bounded.
func TestHugeSSHWindowIsBounded(t *testing.T) {
	r := startEdgeSSH(t, nil)
	c, err := sshtest.Dial(r.addr, r.viewer, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out, in := sshtest.Terminal(t, c)
	var (
		mu    sync.Mutex
		seen  []byte
		total int
	)
	go func() {
		p := make([]byte, 64<<10)
		answered := false
		for {
			n, err := out.Read(p)
			mu.Lock()
			total += n
			if len(seen) < 1<<20 {
				seen = append(seen, p[:n]...)
			}
			ask := !answered && bytes.Contains(seen, []byte("\x1b]11;?"))
			mu.Unlock()
			if ask {
				answered = true
				_, _ = in.Write([]byte("\x1b]11;rgb:0000/0000/0000\x07\x1b[?62;c"))
			}
			if err != nil {
				return
			}
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		ready := bytes.Contains(seen, []byte("queue depth"))
		mu.Unlock()
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the console never showed its overview")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	before := total
	mu.Unlock()
	windowChange(t, sess, 5000, 5000)
	const bound = 4 << 20 // a frame of 1000 × 1000 cells with its escapes fits easily
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		mu.Lock()
		sent := total - before
		mu.Unlock()
		if sent > bound {
			t.Fatalf("after a 5000×5000 window-change the viewer's console was sent %d bytes within %v (frames the size the client claims); want the size clamped so that a frame stays under %d bytes",
				sent, time.Since(start).Round(time.Millisecond), bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stallSigner has a listed public key but never produces a signature: a client that
// knows a key (public keys are public: authorized_keys, github.com/USER.keys) but not
// its private half.
type stallSigner struct {
	pub     gossh.PublicKey
	release chan struct{}
}

func (s stallSigner) PublicKey() gossh.PublicKey { return s.pub }

func (s stallSigner) Sign(io.Reader, []byte) (*gossh.Signature, error) {
	<-s.release
	return nil, io.ErrUnexpectedEOF
}

// --ssh-handshake-timeout closes connections that have not authenticated in time.
// authorize marks the connection authenticated whenever the public-key callback says
// yes, but SSH calls it for a bare query ("would this key do?") before any signature:
// offering a listed public key, without its private key, switches the timeout off, and
// the connection stays until the idle timeout (30 min). A handful of such connections
// fill --max-ssh-sessions and lock every operator out, with no key of theirs.
func TestOfferingAListedKeyWithoutSigningKeepsTheHandshakeTimeout(t *testing.T) {
	r := startEdgeSSH(t, func(c *tui.SSHConfig) {
		c.HandshakeTimeout, c.PassphraseGrace = 300*time.Millisecond, 500*time.Millisecond
	})
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	signer := stallSigner{pub: r.viewer.PublicKey(), release: make(chan struct{})}
	defer close(signer.release)
	signing := make(chan struct{})
	go func() {
		_, _, _, _ = gossh.NewClientConn(conn, r.addr, &gossh.ClientConfig{
			User: "mallory",
			Auth: []gossh.AuthMethod{gossh.PublicKeysCallback(func() ([]gossh.Signer, error) {
				return []gossh.Signer{signerHook{stallSigner: signer, signing: signing}}, nil
			})},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		})
	}()
	select {
	case <-signing: // the server said the key would do; the client now "signs" forever
	case <-time.After(10 * time.Second):
		t.Fatal("the server never accepted the key's query")
	}
	time.Sleep(2 * time.Second) // over six handshake timeouts
	if n := r.srv.Sessions(); n != 0 {
		t.Fatalf("%d connection(s) still open 2 s after a 300 ms handshake timeout, though none ever proved a key (it only offered a listed public key)", n)
	}
}

// signerHook tells the test when the client starts signing (after the server's
// SSH_MSG_USERAUTH_PK_OK).
type signerHook struct {
	stallSigner
	signing chan struct{}
}

func (s signerHook) Sign(r io.Reader, data []byte) (*gossh.Signature, error) {
	close(s.signing)
	return s.stallSigner.Sign(r, data)
}

// authorized_keys options are part of the format the README names: OpenSSH refuses a
// key whose from="…" pattern does not match the client's address (and honours
// expiry-time, restrict…). findKey keeps the key and drops its options, so an operator
// key limited to one bastion host gets the full console from anywhere.
func TestAuthorizedKeysFromRestrictionIsEnforced(t *testing.T) {
	dir := t.TempDir()
	operator := sshtest.NewSigner(t)
	keys := filepath.Join(dir, "authorized_keys")
	line := `from="203.0.113.7" ` + string(gossh.MarshalAuthorizedKey(operator.PublicKey()))
	if err := os.WriteFile(keys, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	var consoles atomic.Int64
	srv, err := tui.NewSSHServer(tui.SSHConfig{
		Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(dir, "ssh_host_ed25519"), AuthorizedKeysPath: keys,
		DaemonFor: func(id tui.Identity) (tui.Daemon, error) {
			consoles.Add(1)
			return fakedaemon.New(), nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := sshtest.Dial(srv.Addr().String(), operator, nil)
	if err != nil {
		return // refused: the restriction holds
	}
	defer c.Close()
	t.Fatalf("a key restricted to from=\"203.0.113.7\" in authorized_keys logged in from %s", c.LocalAddr())
}
