package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hangarhq/hangar/http/api"
)

// WithIdentity sends the role ("operator" or "viewer") and the person (an SSH key's
// fingerprint and comment) on every request. The daemon believes them only from its
// own SSH console's token; from an admin token the person is a recorded claim and
// the role can only be lowered.
func WithIdentity(role, actor string) Option {
	return func(c *Client) { c.role, c.actor = role, actor }
}

// Whoami is the role and name the daemon knows this client by.
func (c *Client) Whoami(ctx context.Context) (api.Whoami, error) {
	var v api.Whoami
	return v, c.do(ctx, http.MethodGet, "/admin/whoami", nil, &v)
}

// PauseQueue stops the daemon starting provisioning attempts; orders still arrive.
func (c *Client) PauseQueue(ctx context.Context) (api.QueuePause, error) {
	var v api.QueuePause
	return v, c.do(ctx, http.MethodPost, "/admin/queue/pause", nil, &v)
}

// ResumeQueue starts them again.
func (c *Client) ResumeQueue(ctx context.Context) (api.QueuePause, error) {
	var v api.QueuePause
	return v, c.do(ctx, http.MethodPost, "/admin/queue/resume", nil, &v)
}

// Audit reads the audit log newest first, from below entry before (0: the newest).
func (c *Client) Audit(ctx context.Context, limit int, before uint64) (api.AuditPage, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if before > 0 {
		q.Set("before", strconv.FormatUint(before, 10))
	}
	var v api.AuditPage
	return v, c.do(ctx, http.MethodGet, "/admin/audit", q, &v)
}
