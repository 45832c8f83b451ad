package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/store"
)

// userUpdate is one update for the user actor to process: from the inbox (the
// poller's, or one a previous run left), or straight from the webhook, whose handler
// waits on reply. It is sent as a pointer, which the actor clears once done.
type userUpdate struct {
	id int64
	// update is the body as the webhook, the poller or the router's re-delivery decoded
	// it (ParseUpdateHeader); nil when the header was built by hand: raw is decoded then.
	update     *tgUpdate
	raw        []byte
	acceptedAt time.Time
	// reply, when set, marks an update that is in no inbox: the actor records its
	// update_id with its outcome (store.ProcessUpdate) and answers here, once.
	reply chan<- updateResult
}

// updateResult answers the webhook handler waiting on a userUpdate.
type updateResult struct {
	fresh bool // false: processed before, acknowledged and ignored
	err   error
}

// ErrUpdatePanicked is the webhook's answer for an update whose processing panicked:
// nothing of it was committed, so Telegram delivers it again.
var ErrUpdatePanicked = errors.New("engine: processing the update panicked")

type userDeps struct {
	*userShared
	// entry is this actor's place in the router's directory: it counts down here, once
	// per update, so that the router hears of no update's end.
	entry *userEntry
}

// userShared is what every user actor needs, built once with the router and pointed
// to by each. A copy apiece (about 480 bytes, and the actor's producer kept a second)
// was half of a live user actor's memory: 40,000 users active within the idle timeout
// held 85 MB, which under serve's 256 MiB memory limit the collector marked over and
// over.
type userShared struct {
	sendingOff bool // no bot token: replies go straight to the log
	cfg        Config
	store      UpdateStore
	bot        *bot
	metrics    *metrics
	outbox     *actor.PID
	dispatcher *actor.PID
	feed       *feedRef
	// pending is the engine's count of updates handed to actors, counted down here as
	// entry is.
	pending *atomic.Int64
}

// userActor owns one Telegram user's rate-limit window. It is the only writer of
// ratelimit:{userID}, so every message of the user is counted exactly, in order, and the
// window it persists is the one it holds. Each update's window change, replies and
// removal from the inbox (or, for the webhook's, its seen-marker) are committed
// together.
type userActor struct {
	d      userDeps
	userID int64
	window store.Window
	// lang is the user's language record, read on the first update (langLoaded) and
	// then kept: only this actor's updates change it, in their commits.
	lang       store.UserLanguage
	langLoaded bool
}

func newUserActor(d userDeps, userID int64) actor.Producer {
	return func() actor.Receiver { return &userActor{d: d, userID: userID} }
}

func (a *userActor) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started:
		a.load()
	case actor.Stopped:
	case *userUpdate:
		growStack()
		a.handleUpdate(c, *msg)
		// Hollywood keeps an actor's last message until its next one: cleared, it no
		// longer holds the update's body and decoded form for as long as the actor
		// lives idle (about 360 bytes a user, more with the body).
		*msg = userUpdate{}
		a.d.entry.outstanding.Add(-1)
		a.d.pending.Add(-1)
	case resetWindow:
		a.handleReset(c, msg)
	}
}

// growStack makes an update's goroutine grow its stack here, a few frames deep, to
// the size processing an update takes. Hollywood runs each message to an idle actor
// on a new goroutine, which starts small; the stack used to grow deep inside the bot,
// and copying it meant decoding the stack maps of every large frame above that point
// (runtime.newstack was 5-9 % of the webhook's CPU).
//
//go:noinline
func growStack() {
	var pad [stackPad]byte
	_ = touchStack(pad[:])
}

// touchStack reads the pad, so that the compiler keeps it on the stack.
//
//go:noinline
func touchStack(pad []byte) byte { return pad[len(pad)/2] }

// stackPad makes the first growth reach 8 KiB, which the deepest path of an update
// (the bot, then the commit) fits in: with it, the profile shows the stack growing in
// growStack only. 12 KiB took it to 16 KiB stacks, which cost more to allocate.
const stackPad = 5 << 10

// load reads the persisted window; a store error leaves an empty window, so the user
// passes (availability first) and the error is counted.
func (a *userActor) load() {
	if a.userID == 0 {
		return
	}
	w, err := a.d.store.LoadWindow(a.userID)
	switch {
	case err == nil:
		a.window = w
	case errors.Is(err, store.ErrNotFound):
	default:
		a.storeFailed("load window", err)
	}
}

func (a *userActor) handleUpdate(c *actor.Context, msg userUpdate) {
	var err error
	direct := msg.reply != nil
	prev := a.window
	res := updateResult{fresh: true}
	if direct {
		// Deferred first so that it runs last, after a panic has been recovered into err:
		// the handler always hears, and a panic leaves the window as it was since
		// Telegram delivers the update again.
		defer func() {
			if res.err == nil && err != nil {
				res, a.window = updateResult{err: fmt.Errorf("%w: %v", ErrUpdatePanicked, err)}, prev
			}
			msg.reply <- res
		}()
	}
	defer recoverPanic(a.d.cfg.Logger, a.d.metrics, "user", &err)
	if direct && a.seen(msg.id) {
		a.d.metrics.updatesDuplicate.Inc()
		res.fresh = false
		return
	}
	now := a.d.cfg.Clock.Now()
	update := msg.update
	if update == nil {
		update = decodedUpdate(UpdateHeader{}, msg.raw) // one that no longer decodes: answer nothing
	}
	if update.ID != msg.id { // the inbox's id is the one that counts (see the router's redeliver)
		u := *update
		u.ID = msg.id
		update = &u
	}
	var replies []store.OutboxMessage
	var effects []any
	var window *store.Window
	var language *store.UserLanguage
	if a.userID != 0 { // updates with nobody to answer are only recorded
		allowed, warn := true, false
		if !moneyUpdate(update) {
			allowed, warn = a.admit(now)
		}
		window = &a.window
		switch {
		case allowed:
			out := a.d.bot.handle(update, a.language())
			replies, effects, language = out.replies, out.effects, out.language
			if out.keep {
				// Left in the inbox for the router's sweep to deliver again (a payment
				// the store could not credit); the user hears now, once per try.
				a.window = prev
				for _, m := range replies {
					c.Send(a.d.outbox, sendTransient{msg: m})
				}
				if direct {
					res = a.keep(msg)
				}
				return
			}
		case warn:
			replies = a.d.bot.slowDownReply(update, a.window.ResetAt.Sub(now), a.language())
		default:
			// A refused button press is still answered (a toast only its presser sees),
			// or the button's spinner turned until Telegram gave up.
			replies = a.d.bot.refusedPress(update, a.window.ResetAt.Sub(now), a.language())
		}
		if !allowed {
			a.d.metrics.rateLimited.Inc()
			a.d.feed.publish(c, func() Event {
				return Event{Type: "ratelimit", Data: RateLimitEvent{At: now, UserID: a.userID, Count: a.window.Count, Limited: true}}
			})
		}
	}
	// Effects (an order to queue, a server to delete) follow from writes the bot made
	// already, so they go out whatever happens to the update's own commit.
	defer func() {
		for _, e := range effects {
			switch e := e.(type) {
			case publishEvent:
				a.d.feed.publish(c, func() Event { return e.ev })
			default:
				c.Send(a.d.dispatcher, e)
			}
		}
	}()
	logOnly := a.d.sendingOff && !needsOutbox(replies)
	outcome := store.UpdateOutcome{UpdateID: msg.id, UserID: a.userID, Window: window, Replies: replies, LogOnly: logOnly, Language: language}
	var queued []store.OutboxMessage
	if direct {
		queued, err = a.d.store.ProcessUpdate(outcome)
	} else {
		queued, err = a.d.store.CompleteUpdate(outcome)
	}
	if language != nil {
		// Kept only once committed; after a failure the record is read again.
		a.lang, a.langLoaded = *language, err == nil
	}
	switch {
	case err == nil:
		if direct {
			a.d.metrics.updatesAccepted.Inc()
		}
		a.d.metrics.updatesProcessed.Inc()
		a.d.metrics.processLatency.Observe(now.Sub(msg.acceptedAt).Seconds())
		switch {
		case len(queued) == 0:
		case logOnly:
			for _, m := range queued {
				a.d.metrics.messages.WithLabelValues("logged").Inc()
				a.d.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "telegram sending is off; message logged",
					slog.Int64("chat", m.ChatID), slog.String("text", m.Loggable()))
				m.Status = store.MessageLogged
				a.d.feed.publish(c, func() Event { return Event{Type: "message", Data: m} })
			}
		default:
			c.Send(a.d.outbox, queuedMessages{msgs: queued})
		}
	case errors.Is(err, store.ErrAlreadyProcessed):
		a.window = prev // a re-delivery of something already counted
		if direct {
			a.d.metrics.updatesDuplicate.Inc()
			res.fresh = false
		}
		err = nil
	default:
		// Availability first: the user is answered even though the store failed. The
		// update is not durable, so the webhook answers 503 and Telegram delivers it
		// again (an inbox update stays in the inbox for the sweep); the failure is
		// visible in logs and metrics.
		a.storeFailed("commit update", err)
		// Not counted: Telegram delivers the update again, and that delivery counts.
		a.window = prev
		for _, m := range replies {
			c.Send(a.d.outbox, sendTransient{msg: m})
		}
		res.err = err
	}
}

// moneyUpdate is a Stars payment or its pre-checkout query: never rate-limited nor
// counted. Telegram has taken the Stars by the time the payment arrives (the
// pre-checkout was answered on the webhook's path, whatever the limit), and a payment
// refused by the limit was acknowledged and never credited.
func moneyUpdate(u *tgUpdate) bool {
	return u.PreCheckoutQuery != nil || (u.Message != nil && u.Message.SuccessfulPayment != nil)
}

// language is the user's language record, nil when the store cannot be read (the
// reply then follows the client's language and nothing is written over the record).
func (a *userActor) language() *store.UserLanguage {
	if !a.langLoaded {
		l, err := a.d.bot.pay.GetUserLanguage(a.userID)
		if err != nil {
			return nil
		}
		a.lang, a.langLoaded = l, true
	}
	l := a.lang
	return &l
}

// seen reports whether the webhook's update was processed before (the store rules
// out a fresh update_id without a read). A failing read counts as unseen:
// ProcessUpdate's own check still refuses a second completion.
func (a *userActor) seen(updateID int64) bool {
	seen, err := a.d.store.UpdateSeen(updateID)
	if err != nil {
		a.storeFailed("read update marker", err)
	}
	return seen
}

// keep puts a webhook update the bot could not finish into the inbox, as the inbox
// path holds it, for the router's sweep to try again; the handler answers 200 once
// that is durable.
func (a *userActor) keep(msg userUpdate) updateResult {
	fresh, err := a.d.store.AcceptUpdate(msg.id, msg.raw)
	if err != nil {
		a.storeFailed("keep update", err)
		return updateResult{err: err}
	}
	if fresh {
		a.d.metrics.updatesAccepted.Inc()
	} else {
		a.d.metrics.updatesDuplicate.Inc()
	}
	return updateResult{fresh: fresh}
}

// admit counts one message against the window. allowed says whether it passes; warn
// says whether this is the first refused message of the window (the one that gets a
// "slow down" reply).
func (a *userActor) admit(now time.Time) (allowed, warn bool) {
	// A window ending more than a window from now began in the future: the clock was
	// stepped back (NTP correcting one that ran ahead), and the user would otherwise be
	// refused for as long as the jump, not for at most one window.
	if a.window.ResetAt.IsZero() || !now.Before(a.window.ResetAt) || a.window.ResetAt.Sub(now) > a.d.cfg.RateWindow {
		a.window = store.Window{Count: 1, ResetAt: now.Add(a.d.cfg.RateWindow)}
		return true, false
	}
	if a.window.Count < a.d.cfg.RateLimit {
		a.window.Count++
		return true, false
	}
	if a.window.Warned {
		return false, false
	}
	a.window.Warned = true
	return false, true
}

func (a *userActor) handleReset(c *actor.Context, msg resetWindow) {
	existed, err := a.d.store.ResetWindow(a.userID)
	if !a.window.ResetAt.IsZero() {
		existed = true
	}
	a.window = store.Window{}
	c.Send(msg.replyTo, resetWindowResult{existed: existed, err: err})
}

func (a *userActor) storeFailed(op string, err error) {
	a.d.metrics.rateLimitStoreErr.Inc()
	a.d.cfg.Logger.Error("rate limiter store error; letting the message pass", "op", op, "user", a.userID, "err", err)
}

// needsOutbox reports replies that must pass through the sender even when sending is
// off: one whose text the sender completes (a root password placeholder).
func needsOutbox(replies []store.OutboxMessage) bool {
	for _, m := range replies {
		if m.SecretOrderID != 0 {
			return true
		}
	}
	return false
}
