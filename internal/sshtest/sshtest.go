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

// Console opens a 110×30 PTY session on c and answers the background-colour query
// when the server makes one, as a terminal with a dark background would. It returns
// the session, its screen and its input.
func Console(t testing.TB, c *gossh.Client) (*gossh.Session, *Screen, io.Writer) {
	t.Helper()
	sess, scr, in := open(t, c)
	go scr.answerQueries(in)
	return sess, scr, in
}

// SilentConsole is Console on a terminal that answers no query (script, the Linux
// console, some Windows terminals): whatever the server asks goes unanswered.
func SilentConsole(t testing.TB, c *gossh.Client) (*gossh.Session, *Screen, io.Writer) {
	t.Helper()
	return open(t, c)
}

func open(t testing.TB, c *gossh.Client) (*gossh.Session, *Screen, io.Writer) {
	t.Helper()
	sess, out, in := Terminal(t, c)
	return sess, newScreen(out), in
}

// Terminal opens a session with a 110×30 pty and a shell, closed with the test, and
// answers its raw output and input: for a test that reads the bytes themselves.
func Terminal(t testing.TB, c *gossh.Client) (*gossh.Session, io.Reader, io.Writer) {
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
	return sess, out, in
}

// backgroundQuery is OSC 11 with no colour: a program asking the terminal's background.
const backgroundQuery = "\x1b]11;?"

// answerQueries answers the first background query with black and the device
// attributes wish asks for after it; a server that asks nothing gets nothing.
func (s *Screen) answerQueries(in io.Writer) {
	for {
		s.mu.Lock()
		asked := strings.Contains(s.buf.String(), backgroundQuery)
		closed := s.closed
		s.mu.Unlock()
		if asked {
			_, _ = in.Write([]byte("\x1b]11;rgb:0000/0000/0000\x07\x1b[?62;c"))
			return
		}
		if closed {
			return
		}
		<-s.seen()
	}
}

// Screen collects a session's output and lets a test wait for text in it.
type Screen struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
	got    chan struct{}
	// waiters are woken on every read, for the query answerer beside WaitFor.
	waiters []chan struct{}
}

// seen returns a channel closed at the next read.
func (s *Screen) seen() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if s.closed {
		close(ch)
		return ch
	}
	s.waiters = append(s.waiters, ch)
	return ch
}

func newScreen(r io.Reader) *Screen {
	s := &Screen{got: make(chan struct{}, 1)}
	go func() {
		p := make([]byte, 4096)
		for {
			n, err := r.Read(p)
			s.mu.Lock()
			s.buf.Write(p[:n])
			s.closed = err != nil
			for _, w := range s.waiters {
				close(w)
			}
			s.waiters = nil
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
	s.WaitForWithin(t, want, 10*time.Second)
}

// WaitForWithin fails the test unless the screen shows want within d.
func (s *Screen) WaitForWithin(t testing.TB, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for !s.Shows(want) {
		select {
		case <-s.got:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("the SSH console did not show %q within %s; got:\n%q", want, d, s.buf.String())
		}
	}
}
