package connlimit

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Backoff bounds, the same as net/http's accept loop.
const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

// refusalsInFlight bounds the refused connections being answered at once: each holds
// a descriptor for up to refuseLinger, so a flood beyond it is closed at once instead.
const refusalsInFlight = 64

// refuseLinger is how long a refused or lingering connection is given to take its
// answer and close its side, so that closing ours does not reset it first.
const refuseLinger = time.Second

// lingerDrain caps what a lingering close reads and throws away.
const lingerDrain = 4 << 20

// silentGrace is how long a connection that has sent nothing is kept once the listener
// closes: a client's request may still be on its way, but a connection dialled and
// left unused (HTTP clients dial spares) would otherwise hold a graceful shutdown up
// (fasthttp counts it as busy for 5 s).
const silentGrace = 250 * time.Millisecond

// Config tunes a Listener.
type Config struct {
	// Name labels the metrics and logs ("http", "ssh").
	Name string
	// Max is the most connections open at once; 0 means no cap.
	Max int
	// Refuse writes a polite refusal to a connection over the cap before it is closed
	// (nil: closed without a word). It runs with a short write deadline set.
	Refuse func(net.Conn)
	Logger *slog.Logger
	// Metrics counts refusals and accept errors; nil counts nothing.
	Metrics *Metrics
}

// Metrics are one listener's counters.
type Metrics struct {
	refused      prometheus.Counter
	acceptErrors prometheus.Counter
	open         *atomic.Int64
	refusedN     atomic.Int64
}

// Refused is the number of connections refused so far.
func (m *Metrics) Refused() int64 { return m.refusedN.Load() }

// NewMetrics registers the counters of the listener called name on reg. Every listener
// shares the metric names, told apart by the label listener="name".
func NewMetrics(reg prometheus.Registerer, name string) *Metrics {
	labels := prometheus.Labels{"listener": name}
	m := &Metrics{
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_connections_refused_total",
			Help: "Connections refused because the listener's cap of concurrent connections was reached.", ConstLabels: labels}),
		acceptErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_accept_errors_total",
			Help: "Accept errors (out of descriptors, aborted connections) the listener backed off from and survived.", ConstLabels: labels}),
		open: new(atomic.Int64),
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hangar_connections_open",
		Help: "Connections open on the listener.", ConstLabels: labels}, func() float64 { return float64(m.open.Load()) })
	if reg != nil {
		reg.MustRegister(m.refused, m.acceptErrors, open)
	}
	return m
}

// Open is the number of connections open on the listener.
func (m *Metrics) Open() int64 { return m.open.Load() }

// Listener is a net.Listener with a connection cap and a retrying Accept.
type Listener struct {
	net.Listener
	cfg      Config
	open     *atomic.Int64
	refusing chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	live     map[*Conn]struct{}
}

// Wrap guards ln.
func Wrap(ln net.Listener, cfg Config) *Listener {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Listener{Listener: ln, cfg: cfg, refusing: make(chan struct{}, refusalsInFlight), done: make(chan struct{}),
		live: map[*Conn]struct{}{}}
	l.open = new(atomic.Int64)
	if cfg.Metrics != nil {
		l.open = cfg.Metrics.open
	}
	return l
}

// Open is the number of connections accepted and not yet closed.
func (l *Listener) Open() int { return int(l.open.Load()) }

// Close stops accepting; a backoff in progress ends at once, and connections that
// have sent nothing are closed once they have had silentGrace to start.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		go l.closeSilent()
	})
	return l.Listener.Close()
}

// closeSilent closes, as their grace ends, the connections that never sent a byte; it
// returns once every connection left has spoken (those finish their requests).
func (l *Listener) closeSilent() {
	for {
		var silent []*Conn
		l.mu.Lock()
		for c := range l.live {
			if !c.spoke.Load() {
				silent = append(silent, c)
			}
		}
		l.mu.Unlock()
		if len(silent) == 0 {
			return
		}
		for _, c := range silent {
			if time.Since(c.accepted) >= silentGrace && !c.spoke.Load() {
				c.Close()
			}
		}
		time.Sleep(silentGrace / 5)
	}
}

// Accept returns the next connection within the cap. Errors that a busy server meets
// (descriptors exhausted, a connection aborted before it was accepted) are retried
// after a backoff of 5 ms doubling to 1 s; only a closed listener or an error no wait
// can cure ends the loop.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case <-l.done:
				return nil, err
			default:
			}
			if !Retryable(err) {
				return nil, err
			}
			if l.cfg.Metrics != nil {
				l.cfg.Metrics.acceptErrors.Inc()
			}
			if delay == 0 {
				delay = minBackoff
				l.cfg.Logger.Warn("accept failed; backing off", "listener", l.cfg.Name, "open", l.open.Load(), "err", err)
			} else {
				delay = min(2*delay, maxBackoff)
			}
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		if l.cfg.Max > 0 && l.open.Load() >= int64(l.cfg.Max) {
			l.refuse(c)
			continue
		}
		l.open.Add(1)
		conn := &Conn{Conn: c, l: l, accepted: time.Now()}
		l.mu.Lock()
		l.live[conn] = struct{}{}
		l.mu.Unlock()
		return conn, nil
	}
}

// Retryable tells the accept errors a server survives by waiting: out of descriptors
// or buffers, a connection aborted or reset before it was accepted, timeouts.
func Retryable(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (l *Listener) refuse(c net.Conn) {
	if l.cfg.Metrics != nil {
		l.cfg.Metrics.refused.Inc()
		l.cfg.Metrics.refusedN.Add(1)
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close() // too many refusals already being answered: no words to spare
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		_ = c.SetDeadline(time.Now().Add(refuseLinger))
		if l.cfg.Refuse != nil {
			l.cfg.Refuse(c)
		}
		lingerClose(c)
	}()
}

// lingerClose sends our FIN, then reads what the peer still sends until it closes or
// the deadline passes, then closes. Closing a socket with unread input makes the kernel
// answer with a reset, which can destroy the answer before the peer reads it.
func lingerClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, lingerDrain))
	_ = c.Close()
}

// Conn is a connection counted against its listener's cap until it is closed.
type Conn struct {
	net.Conn
	l        *Listener
	accepted time.Time
	closed   atomic.Bool
	linger   atomic.Bool
	spoke    atomic.Bool // a byte has been read from the peer
}

// Read notes that the peer has spoken.
func (c *Conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.spoke.Load() {
		c.spoke.Store(true)
	}
	return n, err
}

// LingerOnClose asks Close to let the peer read the last answer first: used when the
// server stops reading a request it refused (a body over the limit) mid-way.
func (c *Conn) LingerOnClose() { c.linger.Store(true) }

// Close closes once and frees its place under the cap.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.l.mu.Lock()
	delete(c.l.live, c)
	c.l.mu.Unlock()
	if c.linger.Load() {
		go func() {
			_ = c.Conn.SetDeadline(time.Now().Add(refuseLinger))
			lingerClose(c.Conn)
			c.l.open.Add(-1)
		}()
		return nil
	}
	err := c.Conn.Close()
	c.l.open.Add(-1)
	return err
}

// Unwrap returns the underlying connection.
func (c *Conn) Unwrap() net.Conn { return c.Conn }
