package engine

import (
	"sync/atomic"
	"time"
)

// WebhookState is Telegram's view of hangar's webhook, as getWebhookInfo last said:
// where it delivers, what waits, and its last delivery error. hangar serve asks every
// --telegram-check-every and hands the answer to SetWebhookState; /admin/health, the
// queue's snapshots and the console show it.
type WebhookState struct {
	URL            string    `json:"url"`
	PendingUpdates int       `json:"pending_update_count"`
	LastError      string    `json:"last_error_message,omitempty"`
	LastErrorAt    time.Time `json:"last_error_at,omitzero"`
	CheckedAt      time.Time `json:"checked_at"`
	// CheckError is set when getWebhookInfo itself failed (the state is then older).
	CheckError string `json:"check_error,omitempty"`
}

// WebhookErrorRecent is how long after a delivery error the telegram alarm stays up:
// Telegram re-delivers for 24 h, but an error older than this was followed by
// deliveries that worked or it would have been repeated.
const WebhookErrorRecent = 10 * time.Minute

// alarm reports a delivery error within WebhookErrorRecent of now.
func (w *WebhookState) alarm(now time.Time) bool {
	return w != nil && w.LastError != "" && now.Sub(w.LastErrorAt) < WebhookErrorRecent
}

// webhookCell holds the latest WebhookState for readers in any goroutine: the watcher
// writes it, the dispatcher's snapshots and Health read it.
type webhookCell struct{ p atomic.Pointer[WebhookState] }

func (c *webhookCell) load() *WebhookState {
	if c == nil {
		return nil
	}
	return c.p.Load()
}

// SetWebhookState records what getWebhookInfo said.
func (e *Engine) SetWebhookState(s WebhookState) { e.webhook.p.Store(&s) }
