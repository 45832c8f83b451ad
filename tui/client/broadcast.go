package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/hangarhq/hangar/http/api"
)

// Broadcasts reads GET /admin/broadcast: the newest limit broadcasts with their
// progress, newest first.
func (c *Client) Broadcasts(ctx context.Context, limit int) ([]api.Broadcast, error) {
	var v api.Broadcasts
	return v.Broadcasts, c.do(ctx, http.MethodGet, "/admin/broadcast", limitQuery(limit), &v)
}

// CreateBroadcast posts text, exactly as given, to POST /admin/broadcast; the daemon
// trims it and refuses it (400) empty or over 4096 characters, and (409) while nobody
// has talked to the bot.
func (c *Client) CreateBroadcast(ctx context.Context, text string) (api.Broadcast, error) {
	var v api.Broadcast
	return v, c.doJSON(ctx, http.MethodPost, "/admin/broadcast", map[string]string{"text": text}, &v)
}

// CancelBroadcast is POST /admin/broadcast/:id/cancel: nothing more of broadcast id is
// sent. One that ended is refused (409).
func (c *Client) CancelBroadcast(ctx context.Context, id int64) (api.Broadcast, error) {
	var v api.Broadcast
	return v, c.do(ctx, http.MethodPost, "/admin/broadcast/"+strconv.FormatInt(id, 10)+"/cancel", nil, &v)
}
