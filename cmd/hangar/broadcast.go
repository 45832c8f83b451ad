package main

import (
	"errors"
	"time"

	"github.com/hangarhq/hangar/engine"
)

// broadcastConfig holds the Telegram pacing settings of `hangar serve`.
type broadcastConfig struct {
	// TelegramRate is every message to Telegram a second, replies and broadcasts
	// together (Telegram's own limit is about 30; more needs its paid broadcasts).
	TelegramRate float64
	Rate         float64
	Batch        int
}

func addBroadcastFlags(f *envFlags, c *broadcastConfig) {
	f.Float(&c.TelegramRate, "telegram-rate", "HANGAR_TELEGRAM_RATE", 30,
		"Telegram messages a second, replies and broadcasts together (Telegram allows about 30)")
	f.Float(&c.Rate, "broadcast-rate", "HANGAR_BROADCAST_RATE", 25,
		"broadcast messages a second at most; broadcasts also take only what replies leave of --telegram-rate")
	f.Int(&c.Batch, "broadcast-batch", "HANGAR_BROADCAST_BATCH", 25,
		"recipients per durable progress commit: after a crash at most this many get a broadcast twice")
}

func (c broadcastConfig) validate() error {
	var errs []error
	if c.TelegramRate <= 0 || c.TelegramRate > 10000 {
		errs = append(errs, errors.New("--telegram-rate must be above 0 and at most 10000"))
	}
	if c.Rate <= 0 || c.Rate > 10000 {
		errs = append(errs, errors.New("--broadcast-rate must be above 0 and at most 10000"))
	}
	if c.Batch < 1 || c.Batch > 100000 {
		errs = append(errs, errors.New("--broadcast-batch must be 1 to 100000"))
	}
	return errors.Join(errs...)
}

// sendInterval paces the outbox: one message every 1/TelegramRate.
func (c broadcastConfig) sendInterval() time.Duration {
	return time.Duration(float64(time.Second) / c.TelegramRate)
}

func (c broadcastConfig) engineConfig() engine.BroadcastConfig {
	return engine.BroadcastConfig{Rate: c.Rate, Batch: c.Batch}
}
