package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/store"
)

// Sender delivers one Telegram message. Errors may implement RetryAfter() (Telegram's
// 429) or Permanent() (a 4xx that retrying cannot fix).
type Sender interface {
	Send(ctx context.Context, m store.OutboxMessage) error
	// AnswerCallback acknowledges a button press with a short notice.
	AnswerCallback(ctx context.Context, id, text string) error
	// Enabled is false when no bot token is set: messages go to the log instead.
	Enabled() bool
}

type retryAfterError interface{ RetryAfter() time.Duration }
type permanentError interface{ Permanent() bool }

// Messages the outbox sender understands.
type (
	// pokeOutbox says messages were stored by someone who does not hand them over.
	pokeOutbox struct{}
	outboxTick struct{}
	// queuedMessages hands over messages just committed to the outbox.
	queuedMessages struct{ msgs []store.OutboxMessage }
	// sendTransient sends a message that must not (or could not) be stored in the outbox:
	// one carrying the root password a provider chose (secret), which is masked in any
	// error text about it.
	sendTransient struct {
		msg     store.OutboxMessage
		secret  string
		orderID int64
	}
)

type outboxDeps struct {
	// stop ends when the engine stops: from then on nothing new is sent, and a send in
	// flight gets sendGrace to finish; unsent messages stay in the outbox for the next
	// start instead of holding up the shutdown behind Telegram.
	stop     context.Context
	engine   *actor.Engine
	feed     *feedRef
	password PasswordSource
	cfg      Config
	store    OutboxStore
	// orders queues the notice that replaces a refused password message, recorded in
	// the order's history in the same commit.
	orders  OrderStore
	scrub   scrubber
	notes   notes
	sender  Sender
	metrics *metrics
	// payments sends invoices (nil: sending is off).
	payments paymentSender
}

const (
	outboxTickEvery   = 200 * time.Millisecond
	outboxMaxAttempts = 12
	pokeCoalesce      = 20 * time.Millisecond
	rescanEvery       = 30 * time.Second
	minRescanGap      = time.Second
	sendTimeout       = 15 * time.Second
	sendGrace         = time.Second
)

// outboxSender drains the durable outbox to Telegram. It is the only actor that talks
// to Telegram, so a slow or rate-limited Bot API never blocks the actors that decide
// what to say. A 429 pauses all sending for retry_after; network errors and 5xx back
// off per message; permanent errors drop the message into the log.
type outboxSender struct {
	d           outboxDeps
	repeater    actor.SendRepeater
	pausedUntil time.Time
	transient   []sendTransient
	lastDrain   time.Time        // wall clock: pokes right after a drain are redundant
	done        []store.Finished // outcomes of this drain, committed together
	// queue mirrors the stored outbox in due order, so a drain never scans the store
	// (whose deleted entries make scans slow under load). Producers hand their
	// messages over after committing them; a rescan at start, on poke and every
	// rescanEvery picks up anything that reached the store another way.
	queue     messageHeap
	queued    map[uint64]bool
	lastScan  time.Time
	rescanDue bool
	// finished remembers the messages this sender recorded as sent or dropped (wall
	// clock), for two rescan periods: a producer's hand-over can arrive after a rescan
	// found the same message in the store and it was sent, and must not send it again.
	finished map[uint64]time.Time
	// rate keeps every send, whatever woke the drain (a tick, a hand-over, a poke, a
	// transient message), within Telegram's overall limit (1/SendInterval a second).
	rate rateWindow
}

func newOutboxSender(d outboxDeps) actor.Producer {
	return func() actor.Receiver {
		perSecond := float64(time.Second) / float64(d.cfg.SendInterval)
		rate := newRateWindow(perSecond)
		// A tick's worth: a backlog drains at the full rate on the ticks alone.
		rate.maxBurst = max(1, perSecond*outboxTickEvery.Seconds())
		rate.tokens = rate.maxBurst
		return &outboxSender{d: d, queued: map[uint64]bool{}, finished: map[uint64]time.Time{}, rate: rate}
	}
}

func (o *outboxSender) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started:
		o.repeater = c.SendRepeat(c.PID(), outboxTick{}, outboxTickEvery)
		o.rescan()
	case actor.Stopped:
		o.repeater.Stop()
		o.commitDone()
		if n := o.queue.Len(); n > 0 || len(o.transient) > 0 {
			o.d.cfg.Logger.Info("outbox: unsent messages kept for the next start", "stored", n, "unstorable_dropped", len(o.transient))
		}
	case outboxTick:
		since := time.Since(o.lastScan)
		if since >= rescanEvery || (o.rescanDue && since >= minRescanGap) {
			o.rescan()
		}
		o.drain()
	case pokeOutbox:
		// A rescan reads the whole outbox: many pokes in a burst share one.
		o.rescanDue = true
		if time.Since(o.lastScan) >= minRescanGap {
			o.rescan()
			o.drain()
		}
	case queuedMessages:
		for _, m := range msg.msgs {
			o.add(m)
		}
		// Under load a drain a few milliseconds ago already took what was due, and
		// the tick takes the rest.
		if time.Since(o.lastDrain) >= pokeCoalesce {
			o.drain()
		}
	case sendTransient:
		o.transient = append(o.transient, msg)
		o.drain()
	}
}

// maysend reports whether one more message may go now, and counts it if so: Telegram
// allows about 30 a second overall, over every drain; a drain sends at most
// maxPerDrain, so that the actor answers between them. When sending is off the log
// takes as many as are due.
func (o *outboxSender) maysend(sent int) bool {
	if !o.d.sender.Enabled() {
		return sent < maxPerDrain
	}
	now := time.Now()
	if !o.rate.allow(now) {
		return false
	}
	o.rate.take(now)
	return true
}

// maxPerDrain bounds one drain's sends when nothing else does (sending off).
const maxPerDrain = 500

func (o *outboxSender) drain() {
	defer recoverPanic(o.d.cfg.Logger, o.d.metrics, "outbox", nil)
	o.lastDrain = time.Now()
	defer o.commitDone()
	if o.stopping() {
		return
	}
	now := o.d.cfg.Clock.Now()
	if now.Before(o.pausedUntil) {
		return
	}
	sent := 0
	if !o.drainTransient(now, &sent) {
		return
	}
	for o.queue.Len() > 0 && !o.queue[0].NextAt.After(now) && !o.stopping() {
		if !o.maysend(sent) {
			return
		}
		sent++
		m := heap.Pop(&o.queue).(store.OutboxMessage)
		delete(o.queued, m.ID)
		if !o.sendStored(m) {
			return
		}
	}
}

// drainTransient sends the transient messages that are due, first; one waiting for
// its retry lets the others, and the stored ones, go meanwhile. It returns false when
// sending must stop for now (the rate, a 429, the shutdown).
func (o *outboxSender) drainTransient(now time.Time, sent *int) bool {
	pending, goOn := o.transient, true
	o.transient = o.transient[:0] // kept ones are written behind the ones read
	for _, t := range pending {
		switch {
		case !goOn || t.msg.NextAt.After(now):
		case o.stopping() || !o.maysend(*sent):
			goOn = false
		default:
			*sent++
			if o.sendTransient(&t, now) {
				continue
			}
			goOn = !o.d.cfg.Clock.Now().Before(o.pausedUntil) && !o.stopping()
		}
		o.transient = append(o.transient, t)
	}
	return goOn
}

// stopping reports that the engine is shutting down: what is not sent yet waits in
// the store for the next start.
func (o *outboxSender) stopping() bool { return o.d.stop != nil && o.d.stop.Err() != nil }

func (o *outboxSender) add(m store.OutboxMessage) {
	if _, done := o.finished[m.ID]; o.queued[m.ID] || done {
		return
	}
	o.queued[m.ID] = true
	heap.Push(&o.queue, m)
}

// rescan adds every stored message the queue does not hold yet.
func (o *outboxSender) rescan() {
	o.lastScan = time.Now()
	o.rescanDue = false
	for id, at := range o.finished {
		if o.lastScan.Sub(at) > 2*rescanEvery {
			delete(o.finished, id)
		}
	}
	all, err := o.d.store.QueuedMessages(1 << 20)
	if err != nil {
		o.d.cfg.Logger.Error("outbox read failed", "err", err)
		return
	}
	for _, m := range all {
		o.add(m)
	}
}

// messageHeap orders messages by due time, then id.
type messageHeap []store.OutboxMessage

func (h messageHeap) Len() int { return len(h) }
func (h messageHeap) Less(i, j int) bool {
	if h[i].NextAt.Equal(h[j].NextAt) {
		return h[i].ID < h[j].ID
	}
	return h[i].NextAt.Before(h[j].NextAt)
}
func (h messageHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *messageHeap) Push(x any)   { *h = append(*h, x.(store.OutboxMessage)) }
func (h *messageHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	*h = old[:len(old)-1]
	return m
}

// sendStored sends one outbox message and records the outcome. It returns false when
// sending must pause (Telegram asked us to wait).
func (o *outboxSender) sendStored(m store.OutboxMessage) bool {
	err := o.send(m, "")
	if err != nil && o.stopping() {
		// Cut by the shutdown: not Telegram's answer, so no attempt is counted and the
		// stored message goes out first thing at the next start.
		o.d.cfg.Logger.Info("outbox: send cut by the shutdown; kept for the next start", "id", m.ID)
		return false
	}
	status, retry, pause := o.classify(err)
	switch {
	case retry && pause > 0:
		// Telegram's 429 is about the rate, not this message: it waits for the pause,
		// in the store too (so a restart keeps it), without an attempt counted (twelve
		// 429s dropped it).
		if err := o.d.store.DeferMessage(m, o.pausedUntil, redactErr(err)); err != nil {
			o.d.cfg.Logger.Error("outbox reschedule failed", "id", m.ID, "err", err)
		}
		m.NextAt, m.LastError = o.pausedUntil, redactErr(err)
		o.add(m)
		return false
	case retry:
		next := o.d.cfg.Clock.Now().Add(backoff(m.Attempts))
		if m.Attempts+1 >= outboxMaxAttempts {
			o.finish(m, store.MessageDropped, err)
			o.passwordUndelivered(m.SecretOrderID, false)
			return true
		}
		if err := o.d.store.RescheduleMessage(m, next, redactErr(err)); err != nil {
			o.d.cfg.Logger.Error("outbox reschedule failed", "id", m.ID, "err", err)
		}
		m.Attempts++
		m.NextAt = next
		m.LastError = redactErr(err)
		o.add(m)
		return true
	default:
		o.finish(m, status, err)
		if status == store.MessageDropped {
			o.passwordUndelivered(m.SecretOrderID, false)
		}
		return true
	}
}

// sendTransient sends the head of the in-memory queue; it returns false to keep it
// there, due again after the same backoff a stored message gets (it is in no store: a
// short outage must not use up its tries, as retrying on every drain did in about two
// seconds).
func (o *outboxSender) sendTransient(t *sendTransient, now time.Time) bool {
	m := &t.msg
	err := o.send(*m, t.secret)
	if err != nil && o.stopping() {
		return false
	}
	status, retry, pause := o.classify(err)
	if retry && pause > 0 {
		m.NextAt = o.pausedUntil // a 429: no attempt counted
		return false
	}
	if retry && m.Attempts+1 < outboxMaxAttempts {
		m.NextAt = now.Add(backoff(m.Attempts))
		m.Attempts++
		return false
	}
	if retry {
		status = store.MessageDropped
	}
	if err := o.d.store.LogTransientMessage(*m, status, redactErr(err)); err != nil {
		o.d.cfg.Logger.Warn("outlog write failed", "err", err)
	}
	if status == store.MessageDropped && t.secret != "" {
		o.passwordUndelivered(t.orderID, true)
	}
	return true
}

// passwordUndelivered tells the owner of order id that the message with its root
// password was refused, and how to get it: ask again with /password while the window
// is open, or reset it at the provider when hangar cannot send it again (lost says so).
func (o *outboxSender) passwordUndelivered(id int64, lost bool) {
	if id == 0 || o.d.orders == nil {
		return
	}
	now := o.d.cfg.Clock.Now()
	_, queued, err := o.d.orders.UpdateOrderNotify(id, func(ord *store.Order) error {
		ord.Record(now, "password_undelivered", "")
		return nil
	}, o.d.notes.passwordUndelivered(id, o.chatOf(id), lost, o.d.cfg.Secrets.window()))
	if err != nil {
		o.d.cfg.Logger.Error("outbox: could not tell a user their password message was refused", "order", id, "err", err)
		return
	}
	for _, m := range queued {
		o.add(m)
	}
}

func (o *outboxSender) chatOf(id int64) int64 {
	ord, err := o.d.orders.GetOrder(id)
	if err != nil {
		return 0
	}
	return ord.ChatID
}

// send delivers m; secret is a password already in m.Text (a transient message). The
// error it returns is scrubbed of the password and every configured token.
func (o *outboxSender) send(m store.OutboxMessage, secret string) error {
	if !o.d.sender.Enabled() {
		// LogAttrs: every notice of a bot without a token comes here, and boxing the
		// arguments of Info was 2 % of the objects an orders run allocated.
		o.d.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "telegram sending is off; message logged",
			slog.Int64("chat", m.ChatID), slog.String("text", m.Loggable()))
		return nil
	}
	if m.SecretOrderID != 0 {
		if o.d.password == nil {
			return permanentSendError("no password source for a message that needs one")
		}
		if err := o.ownersPrivateChat(m); err != nil {
			return err
		}
		pw, ok, err := o.d.password.Reveal(m.SecretOrderID)
		if err != nil {
			return o.d.scrub.err(fmt.Errorf("root password of order %d: %w", m.SecretOrderID, err))
		}
		if ok {
			secret = pw
			m.Text = strings.ReplaceAll(m.Text, store.RootPasswordPlaceholder, html.EscapeString(secret))
		} else {
			m.Text = strings.ReplaceAll(m.Text, store.RootPasswordPlaceholder, o.d.notes.printer(m.ChatID).T("PasswordGone"))
		}
	}
	return o.d.scrub.err(o.deliver(m), secret)
}

// ownersPrivateChat refuses a message that would reveal an order's root password
// anywhere but its owner's private chat. The bot and the ready notice address theirs
// there; this is the one rule every sender's message passes, so that no future one
// can post a password to a group, where everyone would read it.
func (o *outboxSender) ownersPrivateChat(m store.OutboxMessage) error {
	if o.d.orders == nil {
		return permanentSendError("no order records to check a password message's chat against")
	}
	ord, err := o.d.orders.GetOrder(m.SecretOrderID)
	if errors.Is(err, store.ErrNotFound) {
		return permanentSendError(fmt.Sprintf("order %d of a password message is gone", m.SecretOrderID))
	}
	if err != nil {
		return fmt.Errorf("order %d of a password message: %w", m.SecretOrderID, err)
	}
	if owner := privateChat(ord); m.ChatID != owner {
		o.d.cfg.Logger.Error("outbox: refused a root password message addressed to another chat than its owner's",
			"order", ord.ID, "chat", m.ChatID)
		return permanentSendError(fmt.Sprintf("order %d's root password goes only to its owner's private chat, not to chat %d", ord.ID, m.ChatID))
	}
	return nil
}

func (o *outboxSender) deliver(m store.OutboxMessage) error {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	if o.d.stop != nil {
		// A send already under way when the engine stops may finish within sendGrace;
		// cut later, it counts as a failed try and the message is sent at the next start.
		defer context.AfterFunc(o.d.stop, func() { time.AfterFunc(sendGrace, cancel) })()
	}
	if m.CallbackQueryID != "" {
		return o.d.sender.AnswerCallback(ctx, m.CallbackQueryID, m.Text)
	}
	if m.Invoice != nil {
		if o.d.payments == nil {
			return permanentSendError("this sender cannot send invoices")
		}
		return o.d.payments.SendInvoice(ctx, m)
	}
	return o.d.sender.Send(ctx, m)
}

// classify maps a send error to the status to record, whether to retry, and how long
// to pause all sending.
func (o *outboxSender) classify(err error) (status string, retry bool, pause time.Duration) {
	if err == nil {
		if o.d.sender.Enabled() {
			o.d.metrics.messages.WithLabelValues("sent").Inc()
			return store.MessageSent, false, 0
		}
		o.d.metrics.messages.WithLabelValues("logged").Inc()
		return store.MessageLogged, false, 0
	}
	var ra retryAfterError
	if errors.As(err, &ra) && ra.RetryAfter() > 0 {
		o.d.metrics.messages.WithLabelValues("throttled").Inc()
		pause = ra.RetryAfter()
		o.pausedUntil = o.d.cfg.Clock.Now().Add(pause)
		o.d.cfg.Logger.Warn("telegram asked to slow down", "retry_after", pause)
		return "", true, pause
	}
	var pe permanentError
	if errors.As(err, &pe) && pe.Permanent() {
		o.d.metrics.messages.WithLabelValues("dropped").Inc()
		o.d.cfg.Logger.Warn("telegram refused a message; dropping it", "err", redactErr(err))
		return store.MessageDropped, false, 0
	}
	o.d.metrics.messages.WithLabelValues("retry").Inc()
	o.d.cfg.Logger.Warn("telegram send failed; will retry", "err", redactErr(err))
	return "", true, 0
}

func (o *outboxSender) finish(m store.OutboxMessage, status string, err error) {
	o.done = append(o.done, store.Finished{Message: m, Status: status, Error: redactErr(err)})
	o.finished[m.ID] = time.Now()
	if o.d.sender.Enabled() {
		// A message Telegram accepted is recorded at once, so a crash can repeat at
		// most the one in flight; logged-only messages are batched.
		o.commitDone()
	}
}

// commitDone records a drain's outcomes in one commit. A crash before it re-sends
// those messages at the next start: at least once, never lost.
func (o *outboxSender) commitDone() {
	if len(o.done) == 0 {
		return
	}
	// The same commit starts the /password window of every password among them
	// (store.FinishMessages), after which it and its key are destroyed.
	if err := o.d.store.FinishMessages(o.done); err != nil {
		o.d.cfg.Logger.Error("outbox: could not record sent messages", "count", len(o.done), "err", err)
	}
	for _, f := range o.done {
		o.d.feed.publish(o.d.engine, func() Event {
			m := f.Message
			m.Status, m.LastError, m.Text, m.LogText = f.Status, f.Error, m.Loggable(), ""
			return Event{Type: "message", Data: m}
		})
	}
	o.done = o.done[:0]
}

// backoff for message retries: 1s, 2s, 4s … capped at 5 minutes.
func backoff(attempts int) time.Duration {
	d := time.Second << min(attempts, 9)
	return min(d, 5*time.Minute)
}

// redactErr renders an error for storage; the Telegram client already strips the token.
func redactErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

type permanentSendError string

func (e permanentSendError) Error() string   { return string(e) }
func (e permanentSendError) Permanent() bool { return true }
