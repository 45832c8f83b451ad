package tui

import (
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/muesli/termenv"
)

// sessionRenderer is the lipgloss renderer of one SSH session. It never asks the
// terminal anything: wish's renderer sends OSC 11 (the background colour) and waits for
// the answer, and a terminal that does not answer (script, the Linux console, some
// Windows terminals) left the session blank until a key press, which the wait then
// swallowed. The background is taken from COLORFGBG when the client passes it, and is
// otherwise assumed dark, the common case for an operations terminal; the palette's
// adaptive colours read on both.
func sessionRenderer(sess ssh.Session) *lipgloss.Renderer {
	pty, _, ok := sess.Pty()
	if !ok || pty.Term == "" || pty.Term == "dumb" {
		return lipgloss.NewRenderer(sess, termenv.WithProfile(termenv.Ascii))
	}
	env := sessionEnv(append(sess.Environ(), "TERM="+pty.Term))
	var out io.Writer = sess
	opts := []termenv.OutputOption{termenv.WithEnvironment(env), termenv.WithColorCache(true)}
	if pty.Slave != nil {
		out = pty.Slave
	} else {
		opts = append(opts, termenv.WithUnsafe()) // an emulated PTY is a terminal too
	}
	r := lipgloss.NewRenderer(out, opts...)
	r.SetHasDarkBackground(darkBackground(env.Getenv("COLORFGBG")))
	return r
}

// darkBackground reads COLORFGBG ("15;0": white on black); the background is the last
// field, an ANSI colour number where 7 and 9-15 are light. Without it: dark.
func darkBackground(colorfgbg string) bool {
	fields := strings.Split(colorfgbg, ";")
	bg, err := strconv.Atoi(fields[len(fields)-1])
	if err != nil {
		return true
	}
	return !(bg == 7 || (bg >= 9 && bg <= 15))
}

// sessionEnv is the client's environment as termenv reads it.
type sessionEnv []string

func (e sessionEnv) Environ() []string { return e }

func (e sessionEnv) Getenv(k string) string {
	for _, v := range e {
		if strings.HasPrefix(v, k+"=") {
			return v[len(k)+1:]
		}
	}
	return ""
}
