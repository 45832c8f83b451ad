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
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/activeterm"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/charmbracelet/wish/logging"
	gossh "golang.org/x/crypto/ssh"

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
	// Daemon returns the Daemon a new session talks to.
	Daemon func() (Daemon, error)
	// Target names the daemon on the session's screen.
	Target string
	Logger *slog.Logger
	// Console adjusts each session's root model options (tests fix the clock).
	Console func(*Options)
}

// Banner is shown by SSH clients before authentication. A server cannot write to a
// client whose key it refused (the connection never gets a channel), so this is
// where an unknown key learns why it is turned away; OpenSSH then prints
// "Permission denied (publickey)" and disconnects.
const Banner = "hangar operations console: public-key access only.\r\n" +
	"If you are refused, ask an operator to add your public key to hangar's authorized_keys.\r\n"

// SSHServer serves one console program per SSH session.
type SSHServer struct {
	cfg  SSHConfig
	srv  *ssh.Server
	log  *slog.Logger
	ln   net.Listener
	done chan error
	once sync.Once
}

// NewSSHServer builds the server; Start binds it.
func NewSSHServer(cfg SSHConfig) (*SSHServer, error) {
	if cfg.Daemon == nil {
		return nil, errors.New("tui: SSHConfig.Daemon is required")
	}
	if cfg.HostKeyPath == "" || cfg.AuthorizedKeysPath == "" {
		return nil, errors.New("tui: SSHConfig needs HostKeyPath and AuthorizedKeysPath")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &SSHServer{cfg: cfg, log: log.With("component", "ssh"), done: make(chan error, 1)}
	srv, err := wish.NewServer(
		wish.WithAddress(cfg.Addr),
		wish.WithHostKeyPath(cfg.HostKeyPath),
		wish.WithBanner(Banner),
		wish.WithPublicKeyAuth(s.authorize),
		wish.WithIdleTimeout(2*time.Hour),
		wish.WithMiddleware(
			bm.Middleware(s.session),
			activeterm.Middleware(),
			logging.MiddlewareWithLogger(s.logAdapter()),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("tui: ssh server: %w", err)
	}
	s.srv = srv
	return s, nil
}

// authorize re-reads the authorized_keys file on every attempt; a missing or broken
// file refuses everyone rather than anyone.
func (s *SSHServer) authorize(ctx ssh.Context, key ssh.PublicKey) bool {
	data, err := os.ReadFile(s.cfg.AuthorizedKeysPath)
	if err != nil {
		s.log.Warn("ssh console: cannot read authorized keys; refusing", "path", s.cfg.AuthorizedKeysPath, "err", err)
		return false
	}
	for len(bytes.TrimSpace(data)) > 0 {
		k, _, _, rest, err := gossh.ParseAuthorizedKey(data)
		if err != nil {
			break
		}
		if ssh.KeysEqual(k, key) {
			return true
		}
		data = rest
	}
	s.log.Info("ssh console: unknown key refused", "user", ctx.User(), "remote", ctx.RemoteAddr().String(), "fingerprint", gossh.FingerprintSHA256(key))
	return false
}

// session builds a fresh root model per session, with styles for that terminal.
func (s *SSHServer) session(sess ssh.Session) (tea.Model, []tea.ProgramOption) {
	d, err := s.cfg.Daemon()
	if err != nil {
		wish.Fatalln(sess, "hangar: the console cannot reach the daemon:", err)
		return nil, nil
	}
	pty, _, _ := sess.Pty()
	st := styles.DefaultStyles(sessionRenderer(sess))
	km := keymap.DefaultKeyMap()
	o := Options{
		Daemon: d, Context: sess.Context(), Target: s.cfg.Target,
		Styles: &st, KeyMap: &km, Width: pty.Window.Width, Height: pty.Window.Height,
	}
	if s.cfg.Console != nil {
		s.cfg.Console(&o)
	}
	return New(o), []tea.ProgramOption{tea.WithAltScreen()}
}

// Start binds the address and serves in the background until Shutdown.
func (s *SSHServer) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("tui: ssh listen %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
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
