package sshtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// NewSigner makes a fresh ed25519 key.
func NewSigner(t testing.TB) gossh.Signer {
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

// Dial connects as "operator" with signer's key; banner, when not nil, collects what
// the server says before authentication.
func Dial(addr string, signer gossh.Signer, banner *string) (*gossh.Client, error) {
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{
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

// Console opens a 110×30 PTY session on c and answers the terminal query wish makes
// before the program starts, as a terminal with a dark background would. It returns
// the session, its screen and its input.
func Console(t testing.TB, c *gossh.Client) (*gossh.Session, *Screen, io.Writer) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
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
	scr.WaitFor(t, "\x1b]11;?")
	if _, err := in.Write([]byte("\x1b]11;rgb:0000/0000/0000\x07\x1b[?62;c")); err != nil {
		t.Fatal(err)
	}
	return sess, scr, in
}

// Screen collects a session's output and lets a test wait for text in it.
type Screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
	got chan struct{}
}

func newScreen(r io.Reader) *Screen {
	s := &Screen{got: make(chan struct{}, 1)}
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

// Shows reports whether the screen has shown want so far.
func (s *Screen) Shows(want string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.buf.String(), want)
}

// WaitFor fails the test unless the screen shows want within 10 s.
func (s *Screen) WaitFor(t testing.TB, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !s.Shows(want) {
		select {
		case <-s.got:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("the SSH console never showed %q; got:\n%q", want, s.buf.String())
		}
	}
}
