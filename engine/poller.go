package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"
)

// UpdateSource is Telegram's getUpdates (telegram.Admin).
type UpdateSource interface {
	GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]json.RawMessage, error)
}

// OffsetStore keeps the getUpdates offset durably.
type OffsetStore interface {
	TelegramOffset() (int64, error)
	SetTelegramOffset(offset int64) error
}

// updateQueuer is the engine's door for polled updates: the inbox.
type updateQueuer interface {
	QueueUpdate(h UpdateHeader, raw []byte) (fresh bool, err error)
}

// Poller is long polling (--telegram-mode polling), for a bot on a machine Telegram
// cannot reach: it fetches updates with getUpdates and hands each to the durable
// inbox, with the webhook's update_id de-duplication and the same actors. An update
// is confirmed to Telegram (the next offset) only after the inbox holds it, and the
// offset is stored after that: a crash in between fetches it again, and the inbox's
// update_id check drops the repeat. So a restart neither loses nor repeats one.
type Poller struct {
	src     UpdateSource
	offsets OffsetStore
	eng     updateQueuer
	log     *slog.Logger
	// Wait is getUpdates' long-poll timeout.
	Wait time.Duration
}

// NewPoller returns a poller feeding eng.
func NewPoller(src UpdateSource, offsets OffsetStore, eng *Engine, log *slog.Logger) *Poller {
	return &Poller{src: src, offsets: offsets, eng: eng, log: log.With("component", "poller"), Wait: 25 * time.Second}
}

// retryAfterer is an error that says how long to wait (a 429).
type retryAfterer interface{ RetryAfter() time.Duration }

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	offset, err := p.offsets.TelegramOffset()
	if err != nil {
		return err
	}
	p.log.Info("long polling Telegram for updates", "offset", offset)
	backoff, failing := time.Second, false
	for ctx.Err() == nil {
		updates, err := p.src.GetUpdates(ctx, offset, p.Wait)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			wait := backoff
			var ra retryAfterer
			if errors.As(err, &ra) && ra.RetryAfter() > 0 {
				wait = ra.RetryAfter()
			}
			if !failing {
				p.log.Error("getUpdates failed; retrying", "err", err, "retry_in", wait)
				failing = true
			}
			sleep(ctx, wait)
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		if failing {
			p.log.Info("getUpdates works again")
			failing, backoff = false, time.Second
		}
		next := offset
		for _, raw := range updates {
			h, err := ParseUpdateHeader(raw)
			if err != nil {
				// Skipped, and confirmed past when its update_id can be read at all: else
				// the last of a batch was fetched again at once, in a loop, until a newer
				// update came.
				id := updateIDOf(raw)
				p.log.Warn("skipping an update that does not parse", "update_id", id, "err", err)
				if id > 0 {
					next = id + 1
				}
				continue
			}
			// Every update returned is handed on and confirmed past, even one numbered
			// below the offset: after a week without updates Telegram may number them
			// again from lower, and returns them whatever the offset. Skipped as
			// "confirmed already", they were fetched again at once, for ever, and the bot
			// went deaf. A repeat is dropped by the update_id's seen-marker.
			if !p.accept(ctx, h, raw) {
				return nil
			}
			next = h.ID + 1
		}
		if next != offset {
			for err := p.offsets.SetTelegramOffset(next); err != nil; err = p.offsets.SetTelegramOffset(next) {
				p.log.Warn("cannot store the getUpdates offset; retrying", "err", err)
				if !sleep(ctx, time.Second) {
					return nil
				}
			}
			offset = next
		}
	}
	return nil
}

// accept hands one update to the engine, waiting out back-pressure and store errors:
// Telegram keeps the update until a later offset confirms it.
func (p *Poller) accept(ctx context.Context, h UpdateHeader, raw []byte) bool {
	for {
		_, err := p.eng.QueueUpdate(h, raw)
		if err == nil {
			return true
		}
		if !errors.Is(err, ErrBusy) {
			p.log.Warn("cannot accept a polled update; retrying", "update_id", h.ID, "err", err)
		}
		if !sleep(ctx, 500*time.Millisecond) {
			return false
		}
	}
}

// sleep waits d or until ctx ends, reporting whether the whole d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// updateIDOf is the update_id of an update the header decoder refused, or -1.
func updateIDOf(raw []byte) int64 {
	var u struct {
		ID *int64 `json:"update_id"`
	}
	if json.Unmarshal(raw, &u) != nil || u.ID == nil || *u.ID < 0 {
		return -1
	}
	return *u.ID
}
