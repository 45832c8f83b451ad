package connlimit_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/internal/connlimit"
)

// setup serves a capped listener on loopback that holds every accepted connection
// open until the test closes it; accepted carries them to the test.
func setup(t *testing.T, max int) (addr string, accepted chan net.Conn, m *connlimit.Metrics, ln *connlimit.Listener) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m = connlimit.NewMetrics(reg, "test")
	ln = connlimit.Wrap(raw, connlimit.Config{Name: "test", Max: max, Metrics: m,
		Refuse: func(c net.Conn) { fmt.Fprint(c, "busy\n") }})
	accepted = make(chan net.Conn, 100)
	done := make(chan error, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				done <- err
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept ended with %v, want net.ErrClosed", err)
		}
	})
	return raw.Addr().String(), accepted, m, ln
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConnectionsOverTheCapAreRefusedPolitelyAndCounted(t *testing.T) {
	addr, accepted, m, ln := setup(t, 2)
	a, b := dial(t, addr), dial(t, addr)
	_, _ = a, b
	first, second := <-accepted, <-accepted

	// The third is over the cap: it reads the refusal, then the server's close.
	over := dial(t, addr)
	_ = over.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(over).ReadString('\n')
	if err != nil || line != "busy\n" {
		t.Fatalf("over the cap read %q, %v; want the refusal", line, err)
	}
	if n := m.Refused(); n != 1 {
		t.Fatalf("refused counter = %v, want 1", n)
	}
	if ln.Open() != 2 {
		t.Fatalf("open = %d, want 2", ln.Open())
	}

	// Closing one accepted connection (twice: the second must not free another
	// place) makes room for exactly one more.
	first.Close()
	first.Close()
	dial(t, addr)
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("a connection within the cap was not accepted")
	}
	over2 := dial(t, addr)
	_ = over2.SetDeadline(time.Now().Add(10 * time.Second))
	if line, _ := bufio.NewReader(over2).ReadString('\n'); line != "busy\n" {
		t.Fatalf("the cap let a third connection in (read %q)", line)
	}
	second.Close()
}

// A connection closed with LingerOnClose lets the peer read the last answer even when
// the peer is still sending: closing with unread input would reset it instead.
func TestLingeringCloseDeliversTheAnswerToAPeerStillSending(t *testing.T) {
	addr, accepted, _, _ := setup(t, 0)
	client := dial(t, addr)
	server := (<-accepted).(*connlimit.Conn)

	// The client sends far more than the server reads, as a body over the limit does.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		junk := make([]byte, 64<<10)
		for range 32 {
			if _, err := client.Write(junk); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 1024)
	if _, err := io.ReadFull(server, buf); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Write([]byte("413 too large\n")); err != nil {
		t.Fatal(err)
	}
	server.LingerOnClose()
	server.Close()
	<-sent
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(client).ReadString('\n')
	if line != "413 too large\n" {
		t.Fatalf("client read %q, %v; want the answer before the close", line, err)
	}
}

func TestRetryableAcceptErrors(t *testing.T) {
	op := func(errno syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
	cases := []struct {
		err  error
		want bool
	}{
		{op(syscall.EMFILE), true},
		{op(syscall.ENFILE), true},
		{op(syscall.ECONNABORTED), true},
		{op(syscall.ENOBUFS), true},
		{net.ErrClosed, false},
		{op(syscall.EINVAL), false},
		{io.EOF, false},
	}
	for _, c := range cases {
		if got := connlimit.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// Once the listener closes, a connection that never sent a byte is closed after a
// short grace (HTTP clients dial spare connections they may never use, and a graceful
// shutdown would wait for them), while one that has spoken is left to its server.
func TestClosingTheListenerClosesSilentConnections(t *testing.T) {
	addr, accepted, _, ln := setup(t, 0)
	silent, spoken := dial(t, addr), dial(t, addr)
	a, b := <-accepted, <-accepted
	if _, err := spoken.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	// Which accepted connection is which depends on arrival: read from the one that
	// has something to say.
	var talker net.Conn
	for talker == nil {
		for _, c := range []net.Conn{a, b} {
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			if n, _ := c.Read(make([]byte, 3)); n > 0 {
				talker = c
			}
		}
	}
	ln.Close()

	_ = silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the silent connection read %v, want it closed by the listener's close", err)
	}
	// The spoken one is still the server's: it can answer on it.
	if _, err := talker.Write([]byte("ok\n")); err != nil {
		t.Fatalf("the connection that spoke was closed: %v", err)
	}
	_ = spoken.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(spoken).ReadString('\n'); line != "ok\n" {
		t.Fatalf("the connection that spoke read %q, %v", line, err)
	}
	talker.Close()
}
