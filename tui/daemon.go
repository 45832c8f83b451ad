package tui

import (
	"context"

	"github.com/hangarhq/hangar/http/api"
)

// Daemon is everything the console needs from a running hangar. tui/client implements
// it over the admin HTTP API; tests use an in-memory fake. A call that reached the
// daemon and was refused fails with *api.Error; any other error means the daemon was
// not reached, and the console says so in its banner.
type Daemon interface {
	Queue(ctx context.Context) (api.QueueStats, error)
	Orders(ctx context.Context, status string, limit int, before int64) (api.OrderPage, error)
	Order(ctx context.Context, id int64) (api.Order, error)
	CancelOrder(ctx context.Context, id int64) (api.Order, error)
	// TerminateOrder deletes an active order's server at its provider and marks the
	// order terminated, answering the order as it now stands. Any other status is
	// refused with an *api.Error (409). The provider call can take seconds.
	TerminateOrder(ctx context.Context, id int64) (api.Order, error)
	DeadLetters(ctx context.Context, limit int) ([]api.Order, error)
	Requeue(ctx context.Context, id int64) (api.Order, error)
	// PurgeDLQ empties the whole dead-letter list; the console checks the list is what
	// the operator was shown right before (the admin API takes no ids for it).
	PurgeDLQ(ctx context.Context) (int, error)
	RateLimits(ctx context.Context, min int) (api.RateLimits, error)
	ResetRateLimit(ctx context.Context, user int64) (bool, error)
	Outbox(ctx context.Context, limit int) (api.Outbox, error)
	BlogStats(ctx context.Context) (api.BlogStats, error)
	// Plans is the catalogue; its currency says how every amount is shown.
	Plans(ctx context.Context) (api.Catalog, error)
	// Events follows the live feed until ctx ends, reconnecting by itself; it reports
	// the stream's health as api.EventConn items and closes the channel at the end.
	Events(ctx context.Context) (<-chan api.Event, error)
}
