package tui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/activeterm"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/charmbracelet/wish/logging"
	"github.com/prometheus/client_golang/prometheus"
	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/internal/connlimit"

	"github.com/hangarhq/hangar/tui/keymap"
	"github.com/hangarhq/hangar/tui/styles"
)

// SSHConfig configures the console's SSH server.
type SSHConfig struct {
	Addr string
	// HostKeyPath is where the host key lives; it is generated on first start.
	HostKeyPath string
	// AuthorizedKeysPath lists the keys allowed in, OpenSSH format. It is re-read on
	// every login, so adding or removing an operator needs no restart.
	AuthorizedKeysPath string
	// ViewerKeysPath lists keys allowed in as viewers: they see everything and change
	// nothing. Re-read on every login too; a key in both files is a viewer.
	ViewerKeysPath string
	// Daemon returns the Daemon a new session talks to.
	Daemon func() (Daemon, error)
	// DaemonFor, when set, is used instead of Daemon: it gets the session's key, so the
	// daemon can be told who acts and with which role.
	DaemonFor func(Identity) (Daemon, error)
	// Target names the daemon on the session's screen.
	Target string
	Logger *slog.Logger
	// Console adjusts each session's root model options (tests fix the clock).
	Console func(*Options)
	// MaxSessions caps concurrent SSH connections, authenticated or not (0: no cap);
	// the excess is closed at once and counted.
	MaxSessions int
	// HandshakeTimeout closes a connection that has not authenticated by then (default
	// 10 s): one that never finishes the handshake must not hold a descriptor for free.
	HandshakeTimeout time.Duration
	// PassphraseGrace is how long past HandshakeTimeout a connection that offered a
	// listed key has to prove it, its owner typing the key's passphrase (default 2m).
	PassphraseGrace time.Duration
	// IdleTimeout closes an authenticated session with no traffic for this long
	// (default 30 min).
	IdleTimeout time.Duration
	// Registry receives the listener's connection counters (nil: not exported).
	Registry prometheus.Registerer
}

// Identity is who an SSH session is: the key's role, fingerprint and comment.
type Identity struct {
	Role        string // "operator" or "viewer"
	Fingerprint string // SHA256:...
	Comment     string // the key's comment in the keys file, often user@host
}

// Actor names the person for the audit log: the fingerprint, then the comment.
func (id Identity) Actor() string {
	if id.Comment == "" {
		return id.Fingerprint
	}
	return id.Fingerprint + " " + id.Comment
}

// ctxAuthenticated marks, in a connection's context, that its key was accepted.
type ctxAuthenticated struct{}

// Banner is shown by SSH clients before authentication. A server cannot write to a
// client whose key it refused (the connection never gets a channel), so this is
// where an unknown key learns why it is turned away; OpenSSH then prints
// "Permission denied (publickey)" and disconnects.
const Banner = "hangar operations console: public-key access only.\r\n" +
	"If you are refused, ask an operator to add your public key to hangar's authorized_keys.\r\n"

// SSHServer serves one console program per SSH session.
type SSHServer struct {
	cfg   SSHConfig
	srv   *ssh.Server
	log   *slog.Logger
	ln    net.Listener
	done  chan error
	once  sync.Once
	conns *connlimit.Metrics
}

// NewSSHServer builds the server; Start binds it.
func NewSSHServer(cfg SSHConfig) (*SSHServer, error) {
	if cfg.Daemon == nil && cfg.DaemonFor == nil {
		return nil, errors.New("tui: SSHConfig.Daemon is required")
	}
	if cfg.HostKeyPath == "" || cfg.AuthorizedKeysPath == "" {
		return nil, errors.New("tui: SSHConfig needs HostKeyPath and AuthorizedKeysPath")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	if cfg.PassphraseGrace <= 0 {
		cfg.PassphraseGrace = 2 * time.Minute
	}
	s := &SSHServer{cfg: cfg, log: log.With("component", "ssh"), done: make(chan error, 1),
		conns: connlimit.NewMetrics(cfg.Registry, "ssh")}
	srv, err := wish.NewServer(
		wish.WithAddress(cfg.Addr),
		wish.WithHostKeyPath(cfg.HostKeyPath),
		wish.WithBanner(Banner),
		wish.WithPublicKeyAuth(s.authorize),
		wish.WithIdleTimeout(cfg.IdleTimeout),
		ssh.WrapConn(s.limitHandshake),
		wish.WithMiddleware(
			bm.Middleware(s.session),
			activeterm.Middleware(),
			logging.MiddlewareWithLogger(s.logAdapter()),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("tui: ssh server: %w", err)
	}
	// Sessions only: no port forwarding, no other channel kinds.
	srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.sessionChannel}
	s.srv = srv
	return s, nil
}

// ctxSessions counts a connection's open session channels.
type ctxSessions struct{}

// ctxKeyOffered marks a connection that offered a listed key (maybe not yet signed).
type ctxKeyOffered struct{}

// sessionChannel admits a session channel. It is the first point a connection has
// proved its key: the key callback also answers bare queries ("would this key do?")
// from clients that never sign, so only here is the connection marked authenticated
// and spared the handshake timeout. One console per connection: every console is a
// client of the daemon of its own (its event stream, its polls), so a connection
// opening channel after channel multiplied the cap on connections (MaxSessions).
func (s *SSHServer) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, ch gossh.NewChannel, ctx ssh.Context) {
	if authed, ok := ctx.Value(ctxAuthenticated{}).(*atomic.Bool); ok {
		authed.Store(true)
	}
	open, _ := ctx.Value(ctxSessions{}).(*atomic.Int32) // set by limitHandshake
	if open == nil || open.Add(1) > 1 {
		if open != nil {
			open.Add(-1)
		}
		s.log.Info("ssh console: refused a second session on one connection", "remote", ctx.RemoteAddr().String())
		_ = ch.Reject(gossh.ResourceShortage, "hangar: one console per connection")
		return
	}
	defer open.Add(-1)
	ssh.DefaultSessionHandler(srv, conn, ch, ctx)
}

// authorize re-reads the keys files on every attempt; a missing or broken operators'
// file refuses everyone rather than anyone.
func (s *SSHServer) authorize(ctx ssh.Context, key ssh.PublicKey) bool {
	if _, ok := s.identify(key, ctx.RemoteAddr()); ok {
		if offered, ok := ctx.Value(ctxKeyOffered{}).(*atomic.Bool); ok {
			offered.Store(true)
		}
		return true
	}
	s.log.Info("ssh console: unknown key refused", "user", ctx.User(), "remote", ctx.RemoteAddr().String(), "fingerprint", gossh.FingerprintSHA256(key))
	return false
}

// identify finds key in the viewers' file, then the operators': a key listed in both
// is a viewer, so listing a key as a viewer is enough to take its power away.
func (s *SSHServer) identify(key ssh.PublicKey, remote net.Addr) (Identity, bool) {
	id := Identity{Fingerprint: gossh.FingerprintSHA256(key)}
	if s.cfg.ViewerKeysPath != "" {
		data, err := os.ReadFile(s.cfg.ViewerKeysPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			// Refused whoever it is: a key listed there may also be in authorized_keys
			// (an operator demoted), and would come back as an operator.
			s.log.Warn("ssh console: cannot read viewer keys; refusing every key until it can", "path", s.cfg.ViewerKeysPath, "err", err)
			return id, false
		}
		if comment, opts, ok := findKey(data, key); ok {
			if err := keyOptionsAllow(opts, remote, time.Now()); err != nil {
				s.log.Info("ssh console: key refused by its options", "fingerprint", id.Fingerprint, "remote", remote.String(), "reason", err)
				return id, false
			}
			id.Role, id.Comment = RoleViewer, comment
			return id, true
		}
	}
	data, err := os.ReadFile(s.cfg.AuthorizedKeysPath)
	if err != nil {
		s.log.Warn("ssh console: cannot read authorized keys; refusing", "path", s.cfg.AuthorizedKeysPath, "err", err)
		return id, false
	}
	if comment, opts, ok := findKey(data, key); ok {
		if err := keyOptionsAllow(opts, remote, time.Now()); err != nil {
			s.log.Info("ssh console: key refused by its options", "fingerprint", id.Fingerprint, "remote", remote.String(), "reason", err)
			return id, false
		}
		id.Role, id.Comment = RoleOperator, comment
		return id, true
	}
	return id, false
}

// Roles of a console session.
const (
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// findKey looks for key in an authorized_keys file's contents, answering its comment
// and options.
func findKey(data []byte, key ssh.PublicKey) (comment string, options []string, ok bool) {
	for len(bytes.TrimSpace(data)) > 0 {
		k, comment, options, rest, err := gossh.ParseAuthorizedKey(data)
		if err != nil {
			break
		}
		if ssh.KeysEqual(k, key) {
			return comment, options, true
		}
		data = rest
	}
	return "", nil, false
}

// limitHandshake closes the connection unless a key is accepted within the handshake
// timeout. The idle timeout cannot do this: every byte of a slow handshake renews it.
func (s *SSHServer) limitHandshake(ctx ssh.Context, conn net.Conn) net.Conn {
	authed, offered := new(atomic.Bool), new(atomic.Bool)
	ctx.SetValue(ctxAuthenticated{}, authed)
	ctx.SetValue(ctxKeyOffered{}, offered)
	ctx.SetValue(ctxSessions{}, new(atomic.Int32))
	var timer atomic.Pointer[time.Timer] // read by the timer's own function
	extended := false
	t := time.AfterFunc(s.cfg.HandshakeTimeout, func() {
		switch {
		case authed.Load():
		case offered.Load() && !extended:
			// A listed key was offered and not yet proven: its owner may be typing the
			// key's passphrase. Once more, for that long; a client that only offers a
			// public key (anyone can) is closed then, not at the idle timeout.
			extended = true
			if t := timer.Load(); t != nil {
				t.Reset(s.cfg.PassphraseGrace)
			}
		default:
			s.log.Debug("ssh console: closing a connection that did not authenticate in time",
				"remote", conn.RemoteAddr().String(), "timeout", s.cfg.HandshakeTimeout)
			conn.Close()
		}
	})
	timer.Store(t)
	go func() {
		<-ctx.Done() // the connection ended: the timer has nothing left to guard
		t.Stop()
	}()
	return conn
}

// session builds a fresh root model per session, with styles for that terminal.
func (s *SSHServer) session(sess ssh.Session) (tea.Model, []tea.ProgramOption) {
	// The role comes from the key the session authenticated with, looked up again: the
	// files may have changed since, and a key offered but not used proves nothing.
	id, ok := s.identify(sess.PublicKey(), sess.RemoteAddr())
	if !ok {
		wish.Fatalln(sess, "hangar: your key is no longer listed")
		return nil, nil
	}
	d, err := s.daemonFor(id)
	if err != nil {
		wish.Fatalln(sess, "hangar: the console cannot reach the daemon:", err)
		return nil, nil
	}
	pty, _, _ := sess.Pty()
	st := styles.DefaultStyles(sessionRenderer(sess))
	km := keymap.DefaultKeyMap()
	o := Options{
		Daemon: d, Context: sess.Context(), Target: s.cfg.Target,
		Styles: &st, KeyMap: &km, Width: pty.Window.Width, Height: pty.Window.Height, Role: id.Role,
	}
	if s.cfg.Console != nil {
		s.cfg.Console(&o)
	}
	return New(o), []tea.ProgramOption{tea.WithAltScreen()}
}

func (s *SSHServer) daemonFor(id Identity) (Daemon, error) {
	if s.cfg.DaemonFor != nil {
		return s.cfg.DaemonFor(id)
	}
	return s.cfg.Daemon()
}

// Start binds the address and serves in the background until Shutdown.
func (s *SSHServer) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("tui: ssh listen %s: %w", s.cfg.Addr, err)
	}
	// Accept errors (out of descriptors) are waited out with a backoff, and connections
	// over MaxSessions closed, so a flood costs the flooder, not the daemon.
	s.ln = connlimit.Wrap(ln, connlimit.Config{Name: "ssh", Max: s.cfg.MaxSessions, Logger: s.log, Metrics: s.conns})
	ln = s.ln
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, ssh.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return nil
}

// Addr is the bound address, once started.
func (s *SSHServer) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Close stops accepting and closes every session at once: a console left attached must
// not hold a shutdown up.
func (s *SSHServer) Close() error {
	var err error
	s.once.Do(func() {
		err = s.srv.Close()
		if s.ln != nil {
			if serveErr := <-s.done; err == nil {
				err = serveErr
			}
		}
	})
	return err
}

// Sessions is the number of SSH connections open, authenticated or not.
func (s *SSHServer) Sessions() int { return int(s.conns.Open()) }

// Shutdown stops accepting, waits for sessions to end until ctx does, then closes
// what is left.
func (s *SSHServer) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		err = s.srv.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			err = s.srv.Close()
		}
		if s.ln != nil {
			if serveErr := <-s.done; err == nil {
				err = serveErr
			}
		}
	})
	return err
}

func (s *SSHServer) logAdapter() logging.Logger { return slogPrintf{s.log} }

type slogPrintf struct{ l *slog.Logger }

func (p slogPrintf) Printf(format string, args ...any) { p.l.Info(fmt.Sprintf(format, args...)) }
