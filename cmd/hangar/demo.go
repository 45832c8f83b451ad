package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
)

// The demo generator (--demo) plays the daemon's outside world so that a fresh
// `make run` has something to show in `hangar console`: Telegram delivering updates,
// the bot's backend placing orders, an operator crediting balances, and blog readers.
// It is an ordinary HTTP client of the daemon's own API on loopback, so everything it
// causes goes through the same validation, storage and feed as real traffic.
//
// Its orders are sized to what the configured simulator completes (--demo), so a
// fresh `make run` shows a queue that keeps up and raises no alarm; --demo=storm
// orders faster than that on purpose, to show the queue falling behind and its alarms.

const (
	demoUsers        = 200
	demoFirstUser    = 700_000_001 // far from ids a test or a real chat would use
	demoDeposit      = 100_000     // covers a few orders of either demo plan
	demoBurstExtra   = 5           // messages past the limit in one burst
	demoFirstBurstIn = 2 * time.Second
)

var (
	demoTexts = []struct {
		text   string
		weight int
	}{
		{"/help", 5}, {"/start", 3}, {"/plans", 3}, {"/order", 1}, {"hello", 1}, {"/status", 1},
	}
	demoSpecs   = []string{"sim-nano", "sim-nano", "sim-nano", "sim-small"}
	demoRegions = []string{"tokyo", "seoul", "singapore"}
	demoSlugs   = []struct {
		slug   string
		weight int
	}{
		{"hello-hangar", 8}, {"wish-ssh-tui", 5}, {"actors-in-go", 4},
		{"badger-ttl-windows", 3}, {"dead-letter-queues", 2}, {"rate-limits-without-kv", 2},
	}
	demoPlaces = []struct {
		country, city string
		lat, lon      float64
	}{
		{"KR", "Seoul", 37.5665, 126.978}, {"KR", "Busan", 35.1796, 129.0756}, {"JP", "Tokyo", 35.6762, 139.6503},
		{"SG", "Singapore", 1.3521, 103.8198}, {"US", "San Francisco", 37.7749, -122.4194}, {"DE", "Berlin", 52.52, 13.405},
	}
)

// demoMode is --demo: off (""), on, or storm. `--demo` alone means on.
type demoMode string

const (
	demoOff   demoMode = ""
	demoOn    demoMode = "on"
	demoStorm demoMode = "storm"
)

func (m *demoMode) String() string { return string(*m) }

// IsBoolFlag lets `--demo` stand alone, as it did when it was a bool.
func (m *demoMode) IsBoolFlag() bool { return true }

func (m *demoMode) Set(v string) error {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "0", "off", "no":
		*m = demoOff
	case "true", "1", "on", "yes":
		*m = demoOn
	case "storm":
		*m = demoStorm
	default:
		return fmt.Errorf("%q: want on, off or storm", v)
	}
	return nil
}

// addDemoFlag registers --demo / HANGAR_DEMO.
func addDemoFlag(f *envFlags, p *demoMode) {
	if v, ok := f.env("HANGAR_DEMO"); ok {
		if err := p.Set(v); err != nil {
			f.errs = append(f.errs, fmt.Errorf("HANGAR_DEMO=%w", err))
		}
	}
	f.fs.Var(p, "demo", f.usage("generate synthetic bot updates, orders and blog views against this daemon's own API, for trying the console: on (orders at about a third of what the simulator completes) or storm (faster than it completes: the queue falls behind and its alarms fire)", "HANGAR_DEMO"))
}

// demoShare is the share of the simulator's capacity the demo orders at (on average):
// low enough that its random clumps and failed attempts never build a lasting backlog.
const demoShare = 0.35

// demoOrderEvery is the range the demo waits between two orders (uniform, so the mean is
// the middle). On, it orders at demoShare of simCapacity, and never faster than the
// demo always did (one per 1-3 s); storm keeps that old pace, which the default
// simulator cannot follow.
func demoOrderEvery(mode demoMode, q queueConfig) (lo, hi time.Duration) {
	if mode == demoStorm {
		return time.Second, 3 * time.Second
	}
	capacity := simCapacity(q)
	if capacity <= 0 {
		return time.Second, 3 * time.Second
	}
	mean := max(time.Duration(float64(time.Second)/(demoShare*capacity)), 2*time.Second)
	return mean / 2, mean * 3 / 2
}

// simCapacity is how many orders a second the simulator completes at most with q: as
// many at once as --max-concurrency allows, each taking the mean latency per attempt,
// and 1/(1-fail rate) attempts per order (a failed attempt holds its slot too).
func simCapacity(q queueConfig) float64 {
	lo, hi, err := cloud.ParseLatency(q.SimLatency)
	if err != nil || q.MaxConcurrency <= 0 || q.SimFailRate >= 1 {
		return 0
	}
	perAttempt := max((lo+hi).Seconds()/2, 0.001)
	attempts := 1 / (1 - max(q.SimFailRate, 0))
	return float64(q.MaxConcurrency) / (perAttempt * attempts)
}

// demo holds one generator's state; its loops run as goroutines of the serve process.
type demo struct {
	base   string
	cfg    serveConfig
	log    *slog.Logger
	hc     *http.Client
	update atomic.Int64
	msgID  atomic.Int64
	// orderLo, orderHi bound the wait between two orders (demoOrderEvery).
	orderLo, orderHi time.Duration
	// viewer sends blog views from varied loopback addresses when no client-IP header
	// is configured (see viewClient); nil when this system cannot.
	viewer *http.Client

	mu      sync.Mutex
	rnd     *rand.Rand
	failing map[string]bool
}

// runDemo generates traffic against the daemon listening on addr until ctx ends.
func runDemo(ctx context.Context, cfg serveConfig, addr net.Addr, log *slog.Logger) {
	log = log.With("component", "demo")
	d := &demo{
		base: "http://" + loopbackAddr(addr),
		cfg:  cfg,
		log:  log,
		hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second,
		}},
		rnd:     rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		failing: map[string]bool{},
	}
	d.orderLo, d.orderHi = demoOrderEvery(cfg.Demo, cfg.Queue)
	if cfg.Blog.ClientIPHeader == "" {
		d.viewer = viewClient()
	}
	defer d.hc.CloseIdleConnections()
	// Telegram ignores an update_id it saw in the last 24 h, and so does hangar; ids
	// counted up from the wall clock in milliseconds stay ahead of any earlier run,
	// since the demo sends far fewer than one update per millisecond.
	d.update.Store(time.Now().UnixMilli())

	var wg sync.WaitGroup
	parts := []string{"blog views"}
	wg.Go(func() { d.viewLoop(ctx) })
	if cfg.WebhookSecret == "" {
		log.Warn("demo: no webhook secret: skipping bot updates and orders (set HANGAR_WEBHOOK_SECRET)")
	} else {
		parts = append(parts, "bot updates")
		wg.Go(func() { d.chatLoop(ctx) })
	}
	switch {
	case cfg.WebhookSecret == "":
	case cfg.AdminToken == "":
		log.Warn("demo: no admin token: skipping orders, which need deposits (set HANGAR_ADMIN_TOKEN)")
	default:
		parts = append(parts, "orders")
		wg.Go(func() { d.orderLoop(ctx) })
	}
	log.Info("demo traffic on", "daemon", d.base, "parts", parts, "users", demoUsers, "mode", string(cfg.Demo),
		"order_every", (d.orderLo+d.orderHi)/2, "sim_completes_per_s", fmt.Sprintf("%.2f", simCapacity(cfg.Queue)))
	wg.Wait()
	log.Info("demo traffic stopped")
}

// loopbackAddr turns a listener address into one a local client can dial: a wildcard
// listener (0.0.0.0, [::]) is reached through loopback.
func loopbackAddr(addr net.Addr) string {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return addr.String()
	}
	ip := ap.Addr()
	switch {
	case ip.IsUnspecified() && ip.Is4():
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	case ip.IsUnspecified():
		ip = netip.IPv6Loopback()
	}
	return netip.AddrPortFrom(ip, ap.Port()).String()
}

func (d *demo) intn(n int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rnd.IntN(n)
}

func (d *demo) float() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rnd.Float64()
}

// between is a random duration in [lo, hi).
func (d *demo) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(d.float()*float64(hi-lo))
}

func (d *demo) user(i int) int64 { return demoFirstUser + int64(i%demoUsers) }

func sleepCtx(ctx context.Context, dur time.Duration) bool {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// chatLoop sends a few updates a second from random users and, now and then, a burst
// from one user past the rate limit so that the limiter visibly trips.
func (d *demo) chatLoop(ctx context.Context) {
	nextBurst := time.Now().Add(demoFirstBurstIn)
	for sleepCtx(ctx, d.between(150*time.Millisecond, 700*time.Millisecond)) {
		if time.Now().After(nextBurst) {
			user := d.user(d.intn(demoUsers))
			n := d.cfg.RateLimit + demoBurstExtra
			for i := 0; i < n && ctx.Err() == nil; i++ {
				d.sendUpdate(ctx, user, "/help")
			}
			d.log.Debug("demo: burst sent", "user", user, "messages", n)
			nextBurst = time.Now().Add(d.between(20*time.Second, 40*time.Second))
			continue
		}
		d.sendUpdate(ctx, d.user(d.intn(demoUsers)), d.pickText())
	}
}

func (d *demo) pickText() string {
	total := 0
	for _, t := range demoTexts {
		total += t.weight
	}
	n := d.intn(total)
	for _, t := range demoTexts {
		if n -= t.weight; n < 0 {
			return t.text
		}
	}
	return "/help"
}

func (d *demo) sendUpdate(ctx context.Context, user int64, text string) {
	name := "Demo" + strconv.FormatInt(user-demoFirstUser+1, 10)
	now := time.Now().Unix()
	body := map[string]any{
		"update_id": d.update.Add(1),
		"message": map[string]any{
			"message_id": d.msgID.Add(1),
			"date":       now,
			"chat":       map[string]any{"id": user, "type": "private", "first_name": name},
			"from":       map[string]any{"id": user, "is_bot": false, "first_name": name, "language_code": "ko"},
			"text":       text,
		},
	}
	status, _, err := d.post(ctx, "/webhook", body, "X-Telegram-Bot-Api-Secret-Token", d.cfg.WebhookSecret)
	d.note(ctx, "bot updates", status, err, http.StatusOK)
}

// orderLoop places an order every orderLo-orderHi. Users take turns in a shuffled ring
// so that none reaches the per-user hourly order limit at the default settings (200
// users at one order per 2 s, storm's pace, is 9 orders per user per hour).
func (d *demo) orderLoop(ctx context.Context) {
	d.mu.Lock()
	ring := d.rnd.Perm(demoUsers)
	d.mu.Unlock()
	for i := 0; sleepCtx(ctx, d.between(d.orderLo, d.orderHi)); i++ {
		user := d.user(ring[i%len(ring)])
		spec, region := demoSpecs[d.intn(len(demoSpecs))], demoRegions[d.intn(len(demoRegions))]
		status, err := d.order(ctx, user, spec, region)
		if status == http.StatusPaymentRequired {
			// A demo user runs dry after a few orders; crediting them is the operator's
			// part of the show.
			ds, _, derr := d.post(ctx, fmt.Sprintf("/admin/users/%d/deposit", user), map[string]any{"amount": demoDeposit},
				"Authorization", "Bearer "+d.cfg.AdminToken)
			if !d.note(ctx, "deposits", ds, derr, http.StatusOK) {
				continue
			}
			status, err = d.order(ctx, user, spec, region)
		}
		// 429 is the per-user order limit doing its job, not a fault of the demo.
		d.note(ctx, "orders", status, err, http.StatusCreated, http.StatusTooManyRequests)
	}
}

func (d *demo) order(ctx context.Context, user int64, spec, region string) (int, error) {
	status, _, err := d.post(ctx, "/orders", map[string]any{
		"user_id": user, "telegram_user_id": strconv.FormatInt(user, 10), "spec_id": spec, "region": region,
	}, "Authorization", "Bearer "+d.cfg.WebhookSecret)
	return status, err
}

// demoVisitors is how many different readers the demo's blog views come from: few
// enough that some come back (unique visitors stay below views), many enough that the
// 30-minute de-duplication lets most views count.
const demoVisitors = 400

// visitorIP is demo reader i's address. Through a client-IP header it is in
// 198.18.0.0/15, reserved for benchmarks, so it can never be a real reader; through the
// socket it is a loopback address other than 127.0.0.1.
func visitorIP(i int, header bool) netip.Addr {
	if header {
		return netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)})
	}
	return netip.AddrFrom4([4]byte{127, 1, byte(i >> 8), byte(i)})
}

type visitorKey struct{}

// viewClient dials each request from the loopback address its context names: the
// daemon sees the demo's readers as different socket peers, so the blog view fills with
// no client-IP header to configure. Linux routes all of 127.0.0.0/8 to lo; where a
// system only has 127.0.0.1 (macOS), viewClient returns nil and views come from there.
func viewClient() *http.Client {
	probe, err := net.ListenPacket("udp4", "127.1.0.1:0")
	if err != nil {
		return nil
	}
	probe.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dl := net.Dialer{Timeout: 5 * time.Second}
		if ip, ok := ctx.Value(visitorKey{}).(netip.Addr); ok {
			dl.LocalAddr = &net.TCPAddr{IP: ip.AsSlice()}
		}
		return dl.DialContext(ctx, network, addr)
	}
	// One connection per view: a kept-alive connection would keep its first address.
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}

// viewLoop counts blog views from demoVisitors readers around the world: each has an
// address (through the configured client-IP header, or else as the socket peer, see
// viewClient) and a place sent in the configured geo headers, so the console's blog
// view and map fill.
func (d *demo) viewLoop(ctx context.Context) {
	if d.cfg.Blog.ClientIPHeader == "" && d.viewer == nil {
		d.log.Info("demo: blog views all come from 127.0.0.1 on this system, so most are de-duplicated; set --client-ip-header to vary visitors")
	}
	total := 0
	for _, s := range demoSlugs {
		total += s.weight
	}
	for sleepCtx(ctx, d.between(300*time.Millisecond, 1500*time.Millisecond)) {
		n := d.intn(total)
		slug := demoSlugs[0].slug
		for _, s := range demoSlugs {
			if n -= s.weight; n < 0 {
				slug = s.slug
				break
			}
		}
		visitor := d.intn(demoVisitors)
		place := demoPlaces[visitor%len(demoPlaces)]
		hdr := []string{
			d.cfg.Blog.CountryHeader, place.country, d.cfg.Blog.CityHeader, place.city,
			d.cfg.Blog.LatHeader, strconv.FormatFloat(place.lat, 'f', 4, 64),
			d.cfg.Blog.LonHeader, strconv.FormatFloat(place.lon, 'f', 4, 64),
		}
		vctx := ctx
		if h := d.cfg.Blog.ClientIPHeader; h != "" {
			hdr = append(hdr, h, visitorIP(visitor, true).String())
		} else if d.viewer != nil {
			vctx = context.WithValue(ctx, visitorKey{}, visitorIP(visitor, false))
		}
		status, _, err := d.postWith(vctx, d.viewer, "/api/views/"+slug, nil, hdr...)
		d.note(ctx, "blog views", status, err, http.StatusOK)
	}
}

// post sends body as JSON (nil sends none) with header name/value pairs; empty names
// are skipped so unset optional headers need no special case.
func (d *demo) post(ctx context.Context, path string, body any, headers ...string) (int, []byte, error) {
	return d.postWith(ctx, nil, path, body, headers...)
}

// postWith is post through hc (nil: the demo's usual client).
func (d *demo) postWith(ctx context.Context, hc *http.Client, path string, body any, headers ...string) (int, []byte, error) {
	if hc == nil {
		hc = d.hc
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] != "" {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, b, nil
}

// note reports whether a call got one of the expected statuses. A part that starts
// failing is logged once as a warning and once more when it recovers, so a daemon
// that refuses the demo does not flood its own log. Errors carry the status and the
// path class only: request headers hold the secrets and are never logged.
func (d *demo) note(ctx context.Context, part string, status int, err error, ok ...int) bool {
	if ctx.Err() != nil {
		return false
	}
	good := err == nil
	if good {
		good = false
		for _, s := range ok {
			if status == s {
				good = true
			}
		}
	}
	d.mu.Lock()
	was := d.failing[part]
	d.failing[part] = !good
	d.mu.Unlock()
	switch {
	case !good && !was && err != nil:
		d.log.Warn("demo: request failed", "part", part, "err", err)
	case !good && !was:
		d.log.Warn("demo: daemon refused a request", "part", part, "status", status)
	case good && was:
		d.log.Info("demo: requests succeed again", "part", part)
	}
	return good
}
