package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/store"
)

// BroadcastStore is what broadcasts need from the store.
type BroadcastStore interface {
	CreateBroadcast(text, by string) (store.Broadcast, error)
	GetBroadcast(id int64) (store.Broadcast, error)
	ListBroadcasts(limit int) ([]store.Broadcast, error)
	ActiveBroadcasts() ([]store.Broadcast, error)
	BroadcastRecipients(id int64, from, limit int) ([]int64, error)
	SaveBroadcastProgress(p store.BroadcastProgress) (store.Broadcast, error)
	CancelBroadcast(id int64) (store.Broadcast, error)
}

// BroadcastConfig tunes broadcasts. Zero values take the defaults.
type BroadcastConfig struct {
	// Rate is the most broadcast messages a second (default 25). It is also held under
	// the overall limit (1/SendInterval, Telegram's ~30/s) minus what the outbox sent in
	// the last second, so ordinary replies keep their share of Telegram.
	Rate float64
	// Batch is how many settled recipients one progress commit records (default 25,
	// a second at the default rate). It is the at-most-one-in-flight window: after a
	// crash the recipients since the last commit, at most Batch of them, are sent the
	// message again. A stop commits first and repeats nobody.
	Batch int
	// PerChat is the least time between two messages to one chat (default 1s,
	// Telegram's per-chat limit); it matters across broadcasts and beside replies.
	PerChat time.Duration
}

func (c *BroadcastConfig) setDefaults(overall float64) {
	if c.Rate <= 0 {
		c.Rate = 25
	}
	c.Rate = min(c.Rate, overall)
	if c.Batch <= 0 {
		c.Batch = 25
	}
	if c.PerChat <= 0 {
		c.PerChat = time.Second
	}
}

// MaxBroadcastText is Telegram's longest message, in characters.
const MaxBroadcastText = 4096

// Broadcast errors the API maps to client errors.
var (
	ErrBroadcastText = errors.New("the text must be 1 to 4096 characters of UTF-8 after trimming")
	// ErrBroadcastFinished refuses to cancel a broadcast that ended.
	ErrBroadcastFinished = store.ErrBroadcastFinished
	// ErrNoRecipients refuses a broadcast while nobody has talked to the bot.
	ErrNoRecipients = store.ErrNoRecipients
	// ErrBroadcastNotFound is an unknown broadcast id.
	ErrBroadcastNotFound = errors.New("no such broadcast")
)

// BroadcastText trims text and checks it fits one Telegram message.
func BroadcastText(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" || !utf8.ValidString(text) || utf8.RuneCountInString(text) > MaxBroadcastText {
		return "", ErrBroadcastText
	}
	return text, nil
}

// CreateBroadcast stores a broadcast of text to every user the bot has seen (by names
// who asked, for the audit log) and wakes the broadcaster.
func (e *Engine) CreateBroadcast(text, by string) (store.Broadcast, error) {
	if !e.started.Load() {
		return store.Broadcast{}, ErrNotStarted
	}
	text, err := BroadcastText(text)
	if err != nil {
		return store.Broadcast{}, err
	}
	b, err := e.store.CreateBroadcast(text, by)
	if err != nil {
		return store.Broadcast{}, err
	}
	e.cfg.Logger.Info("broadcast created", "id", b.ID, "recipients", b.Total)
	e.actors.Send(e.bcast.pid, broadcastPoke{})
	e.feed.publish(e.actors, func() Event { return Event{Type: "broadcast", Data: b} })
	return b, nil
}

// Broadcasts lists up to limit broadcasts, newest first, with their progress as of
// their last progress commit.
func (e *Engine) Broadcasts(limit int) ([]store.Broadcast, error) {
	return e.store.ListBroadcasts(limit)
}

// GetBroadcast returns one broadcast.
func (e *Engine) GetBroadcast(id int64) (store.Broadcast, error) {
	b, err := e.store.GetBroadcast(id)
	if errors.Is(err, store.ErrNotFound) {
		return b, ErrBroadcastNotFound
	}
	return b, err
}

// CancelBroadcast stops a broadcast: once it returns, the broadcaster sends nothing
// more of it (a send already under way finishes).
func (e *Engine) CancelBroadcast(id int64) (store.Broadcast, error) {
	if e.bcast == nil {
		return store.Broadcast{}, ErrNotStarted
	}
	b, err := e.store.CancelBroadcast(id)
	if errors.Is(err, store.ErrNotFound) {
		return b, ErrBroadcastNotFound
	}
	if err != nil {
		return b, err
	}
	e.bcast.cancelled.Store(id, true)
	if e.started.Load() {
		e.actors.Send(e.bcast.pid, broadcastPoke{})
	}
	e.feed.publish(e.actors, func() Event { return Event{Type: "broadcast", Data: b} })
	e.cfg.Logger.Info("broadcast cancelled", "id", id, "sent", b.Sent, "of", b.Total)
	return b, nil
}

// broadcastHandle is what the engine keeps of the broadcaster.
type broadcastHandle struct {
	pid   *actor.PID
	meter *sendMeter
	// cancelled holds ids cancelled in this run, checked before every send so that a
	// cancel takes effect without waiting for the broadcaster's mailbox.
	cancelled *sync.Map
}

// startBroadcaster puts the send meter in front of the Telegram sender (before the
// outbox is given it, so that every send is counted) and spawns the broadcaster.
func (e *Engine) startBroadcaster() {
	cfg := e.cfg.Broadcast
	cfg.setDefaults(float64(time.Second) / float64(e.cfg.SendInterval))
	meter := newSendMeter(e.sender, max(time.Second, cfg.PerChat))
	e.sender = meter
	e.bcast = &broadcastHandle{meter: meter, cancelled: &sync.Map{}}
	e.bcast.pid = e.actors.Spawn(newBroadcaster(broadcasterDeps{
		stop: e.ctx, cfg: e.cfg, bcfg: cfg, store: e.store, sender: meter, meter: meter,
		overall: float64(time.Second) / float64(e.cfg.SendInterval), cancelled: e.bcast.cancelled,
		engine: e.actors, feed: e.feed, metrics: e.metrics,
	}), "broadcast", actor.WithID("broadcaster"))
}

// Messages the broadcaster understands.
type (
	// broadcastPoke says a broadcast was created or cancelled.
	broadcastPoke struct{}
	broadcastTick struct{}
)

type broadcasterDeps struct {
	stop      context.Context
	cfg       Config
	bcfg      BroadcastConfig
	overall   float64 // Telegram messages a second, all senders together
	store     BroadcastStore
	sender    Sender
	meter     *sendMeter
	cancelled *sync.Map
	engine    *actor.Engine
	feed      *feedRef
	metrics   *metrics
}

const (
	broadcastTickEvery   = 20 * time.Millisecond
	broadcastWorkPerTick = 200 * time.Millisecond // the mailbox is read between ticks
	broadcastCommitEvery = time.Second
	broadcastMaxAttempts = 5
	broadcastReadAhead   = 256
)

// broadcaster sends broadcasts, one at a time, oldest first, to each recipient of its
// snapshot in order. Progress is committed every Batch recipients (or second) and at
// stop; a restart resumes at the stored Next, so after a crash at most Batch
// recipients (those settled since the last commit, the send in flight among them) get
// the message twice. It sends through the outbox's Sender, paced by its own rate, the
// overall limit less the outbox's recent sends, and the per-chat gap; a 429 pauses the
// whole broadcast for retry_after.
type broadcaster struct {
	d        broadcasterDeps
	repeater actor.SendRepeater
	ticking  bool
	cur      *store.Broadcast
	next     int     // index of the next recipient to try
	ahead    []int64 // recipients from next on, read ahead
	attempts int     // failed tries of the recipient at next
	// Settled since the last commit.
	sent, failed, blocked int
	blockedUsers          []int64
	lastError             string
	lastCommit            time.Time
	pausedUntil           time.Time
	limiter               rateWindow
}

func newBroadcaster(d broadcasterDeps) actor.Producer {
	return func() actor.Receiver {
		return &broadcaster{d: d, limiter: newRateWindow(d.bcfg.Rate)}
	}
}

func (b *broadcaster) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Started:
		b.wake(c)
	case actor.Stopped:
		b.stopTicking()
		func() {
			defer recoverPanic(b.d.cfg.Logger, b.d.metrics, "broadcast", nil)
			b.commit()
		}()
	case broadcastPoke:
		b.wake(c)
	case broadcastTick:
		b.work()
		if b.cur == nil {
			b.stopTicking()
		}
	}
}

// wake starts ticking if there is work: a broadcast in hand or one in the store.
func (b *broadcaster) wake(c *actor.Context) {
	defer recoverPanic(b.d.cfg.Logger, b.d.metrics, "broadcast", nil)
	if b.cur == nil {
		b.load()
	}
	if b.cur != nil && !b.ticking {
		b.repeater = c.SendRepeat(c.PID(), broadcastTick{}, broadcastTickEvery)
		b.ticking = true
	}
}

func (b *broadcaster) stopTicking() {
	if b.ticking {
		b.repeater.Stop()
		b.ticking = false
	}
}

// load takes the oldest broadcast with work left and resumes it at its stored Next.
func (b *broadcaster) load() {
	active, err := b.d.store.ActiveBroadcasts()
	if err != nil {
		b.d.cfg.Logger.Error("broadcast: could not read the broadcasts", "err", err)
		return
	}
	for _, a := range active {
		if _, gone := b.d.cancelled.Load(a.ID); gone {
			continue
		}
		b.cur, b.next, b.ahead, b.attempts = &a, a.Next, nil, 0
		b.lastCommit = time.Now()
		if a.Next > 0 {
			b.d.cfg.Logger.Info("broadcast resumed", "id", a.ID, "at", a.Next, "of", a.Total)
		}
		return
	}
}

func (b *broadcaster) stopping() bool { return b.d.stop != nil && b.d.stop.Err() != nil }

// work sends what the pacing allows within one tick's budget.
func (b *broadcaster) work() {
	defer recoverPanic(b.d.cfg.Logger, b.d.metrics, "broadcast", nil)
	if b.cur == nil {
		b.load()
	}
	start := time.Now()
	for b.cur != nil && !b.stopping() && time.Since(start) < broadcastWorkPerTick {
		if _, gone := b.d.cancelled.Load(b.cur.ID); gone {
			b.commit()
			b.cur = nil
			b.load()
			continue
		}
		if b.next >= b.cur.Total {
			b.commit()
			continue
		}
		user, ok := b.peek()
		if !ok {
			// The snapshot ends early (it was cut short): nothing is left to send.
			b.next = b.cur.Total
			continue
		}
		if !b.mayTryNow(user) {
			break
		}
		if !b.try(user) {
			break
		}
		if b.settled() >= b.d.bcfg.Batch {
			b.commit()
		}
	}
	if b.cur != nil && (b.settled() >= b.d.bcfg.Batch || time.Since(b.lastCommit) >= broadcastCommitEvery) {
		b.commit()
	}
}

func (b *broadcaster) settled() int { return b.sent + b.failed + b.blocked }

// peek returns the recipient at next, reading the snapshot ahead in chunks.
func (b *broadcaster) peek() (int64, bool) {
	if len(b.ahead) == 0 {
		ids, err := b.d.store.BroadcastRecipients(b.cur.ID, b.next, broadcastReadAhead)
		if err != nil {
			b.d.cfg.Logger.Error("broadcast: could not read recipients", "id", b.cur.ID, "err", err)
			b.pausedUntil = time.Now().Add(time.Second)
			return 0, true // retried after the pause; mayTryNow refuses until then
		}
		if len(ids) == 0 {
			return 0, false
		}
		b.ahead = ids
	}
	return b.ahead[0], true
}

// mayTryNow applies the pacing: a pause after a 429 or an error, the broadcast rate,
// the overall rate with everything else sent, and the per-chat gap.
func (b *broadcaster) mayTryNow(user int64) bool {
	now := time.Now()
	if now.Before(b.pausedUntil) || len(b.ahead) == 0 {
		return false
	}
	if !b.limiter.allow(now) {
		return false
	}
	if b.d.sender.Enabled() {
		total, last := b.d.meter.recent(now, user)
		if float64(total) >= b.d.overall || (!last.IsZero() && now.Sub(last) < b.d.bcfg.PerChat) {
			return false
		}
	}
	return true
}

// try sends the message to user and settles it; false stops this tick's sending.
func (b *broadcaster) try(user int64) bool {
	b.limiter.take(time.Now())
	err := b.send(user)
	if err != nil && b.stopping() {
		// Cut by the shutdown: unsettled, so it is sent at the next start.
		return false
	}
	var ra retryAfterError
	var bl blockedError
	var pe permanentError
	switch {
	case err == nil:
		b.sent++
		b.d.metrics.messages.WithLabelValues("broadcast").Inc()
	case errors.As(err, &bl) && bl.Blocked():
		b.blocked++
		b.blockedUsers = append(b.blockedUsers, user)
	case errors.As(err, &ra) && ra.RetryAfter() > 0:
		b.pausedUntil = time.Now().Add(ra.RetryAfter())
		b.d.metrics.messages.WithLabelValues("throttled").Inc()
		b.d.cfg.Logger.Warn("broadcast: telegram asked to slow down; the broadcast waits", "id", b.cur.ID, "retry_after", ra.RetryAfter())
		return false
	case errors.As(err, &pe) && pe.Permanent():
		b.failed++
		b.lastError = redactErr(err)
	default:
		b.attempts++
		if b.attempts < broadcastMaxAttempts {
			b.pausedUntil = time.Now().Add(backoff(b.attempts - 1))
			b.d.cfg.Logger.Warn("broadcast: send failed; will retry", "id", b.cur.ID, "attempt", b.attempts, "err", redactErr(err))
			return false
		}
		b.failed++
		b.lastError = redactErr(err)
	}
	b.next++
	b.ahead = b.ahead[1:]
	b.attempts = 0
	return true
}

func (b *broadcaster) send(user int64) error {
	m := store.OutboxMessage{ChatID: user, Text: b.cur.Text}
	if !b.d.sender.Enabled() {
		b.d.cfg.Logger.Info("telegram sending is off; broadcast message logged", "broadcast", b.cur.ID, "chat", user)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	if b.d.stop != nil {
		defer context.AfterFunc(b.d.stop, func() { time.AfterFunc(sendGrace, cancel) })()
	}
	return b.d.sender.Send(ctx, m)
}

// commit records what was settled since the last commit; when the broadcast ended
// (done, or cancelled meanwhile) the next one is taken up.
func (b *broadcaster) commit() {
	if b.cur == nil {
		return
	}
	b.lastCommit = time.Now()
	got, err := b.d.store.SaveBroadcastProgress(store.BroadcastProgress{ID: b.cur.ID, Next: b.next,
		Sent: b.sent, Failed: b.failed, Blocked: b.blocked, BlockedUsers: b.blockedUsers, LastError: b.lastError})
	if err != nil {
		// Kept in memory and tried again at the next commit; a crash before then
		// repeats these recipients (the documented window, a little wider).
		b.d.cfg.Logger.Error("broadcast: could not record progress", "id", b.cur.ID, "err", err)
		return
	}
	b.sent, b.failed, b.blocked, b.blockedUsers, b.lastError = 0, 0, 0, nil, ""
	b.cur.Sent, b.cur.Failed, b.cur.Blocked, b.cur.Next, b.cur.State = got.Sent, got.Failed, got.Blocked, got.Next, got.State
	b.d.feed.publish(b.d.engine, func() Event { return Event{Type: "broadcast", Data: got} })
	if !got.Active() {
		if got.State == store.BroadcastDone {
			b.d.cfg.Logger.Info("broadcast finished", "id", got.ID, "sent", got.Sent, "failed", got.Failed, "blocked", got.Blocked)
		}
		b.cur = nil
		if !b.stopping() {
			b.load()
		}
	}
}

// blockedError is a send refused because the user blocked the bot or is gone (403).
type blockedError interface{ Blocked() bool }

// rateWindow paces one sender: a token bucket holding a tenth of a second's worth
// (smooth sending), or maxBurst when set, under a sliding one-second window that never
// admits more than the rate in any second.
type rateWindow struct {
	rate     float64
	maxBurst float64
	tokens   float64
	last     time.Time
	sends    []time.Time // the last second's, oldest first
}

func newRateWindow(rate float64) rateWindow {
	return rateWindow{rate: rate, tokens: 1}
}

func (r *rateWindow) burst() float64 {
	if r.maxBurst > 0 {
		return r.maxBurst
	}
	return max(1, r.rate/10)
}

func (r *rateWindow) allow(now time.Time) bool {
	if !r.last.IsZero() {
		r.tokens = min(r.burst(), r.tokens+now.Sub(r.last).Seconds()*r.rate)
	}
	r.last = now
	for len(r.sends) > 0 && now.Sub(r.sends[0]) >= time.Second {
		r.sends = r.sends[1:]
	}
	return r.tokens >= 1 && float64(len(r.sends)) < max(1, float64(int(r.rate)))
}

func (r *rateWindow) take(now time.Time) {
	r.tokens--
	r.sends = append(r.sends, now)
}

// sendMeter counts every Telegram message sent (the outbox's and the broadcaster's)
// over the last window, and when each chat last got one, so that broadcasts take only
// what ordinary replies leave of Telegram's limits.
type sendMeter struct {
	Sender
	window time.Duration
	mu     sync.Mutex
	sends  []meterEntry // oldest first, within window
	chats  map[int64]time.Time
}

type meterEntry struct {
	at   time.Time
	chat int64
}

func newSendMeter(s Sender, window time.Duration) *sendMeter {
	return &sendMeter{Sender: s, window: window, chats: map[int64]time.Time{}}
}

// Send counts the message before it goes: Telegram counts attempts, not successes.
func (m *sendMeter) Send(ctx context.Context, msg store.OutboxMessage) error {
	m.mu.Lock()
	now := time.Now()
	m.prune(now)
	m.sends = append(m.sends, meterEntry{at: now, chat: msg.ChatID})
	m.chats[msg.ChatID] = now
	m.mu.Unlock()
	return m.Sender.Send(ctx, msg)
}

// recent returns how many messages went out in the last second and when chat last got one.
func (m *sendMeter) recent(now time.Time, chat int64) (int, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now)
	n := 0
	for i := len(m.sends) - 1; i >= 0 && now.Sub(m.sends[i].at) < time.Second; i-- {
		n++
	}
	return n, m.chats[chat]
}

func (m *sendMeter) prune(now time.Time) {
	i := 0
	for ; i < len(m.sends) && now.Sub(m.sends[i].at) >= m.window; i++ {
		if e := m.sends[i]; m.chats[e.chat].Equal(e.at) {
			delete(m.chats, e.chat)
		}
	}
	if i > 0 {
		m.sends = append(m.sends[:0], m.sends[i:]...)
	}
}

var _ Sender = (*sendMeter)(nil)
