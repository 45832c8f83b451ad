package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hangarhq/hangar/http/api"
)

// Client talks to one daemon's admin API. It is safe for concurrent use, so the SSH
// console can share one Client between all sessions.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client

	requestTimeout time.Duration
	minBackoff     time.Duration
	maxBackoff     time.Duration
	idleTimeout    time.Duration
	buffer         int
	now            func() time.Time
	// role and actor are sent on every request (see WithIdentity).
	role, actor string
}

// Option adjusts a Client; the defaults suit a console on a healthy network.
type Option func(*Client)

// WithHTTPClient replaces the transport. It must not set http.Client.Timeout, which
// would cut the event stream; request deadlines come from WithRequestTimeout.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

func WithRequestTimeout(d time.Duration) Option { return func(c *Client) { c.requestTimeout = d } }

// WithBackoff bounds the wait between reconnect attempts of the event stream.
func WithBackoff(min, max time.Duration) Option {
	return func(c *Client) { c.minBackoff, c.maxBackoff = min, max }
}

// WithIdleTimeout is how long the stream may stay silent before it is presumed dead;
// the daemon pings every 15 s, so the default allows two missed pings.
func WithIdleTimeout(d time.Duration) Option { return func(c *Client) { c.idleTimeout = d } }

// WithBuffer sets the event channel's capacity.
func WithBuffer(n int) Option { return func(c *Client) { c.buffer = n } }

// New returns a Client for the daemon at baseURL (for example http://127.0.0.1:8080).
func New(baseURL, token string, opts ...Option) (*Client, error) {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("client: daemon address %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("client: daemon address %q: want http:// or https://", baseURL)
	}
	c := &Client{
		base:           u,
		token:          token,
		hc:             &http.Client{},
		requestTimeout: 10 * time.Second,
		minBackoff:     500 * time.Millisecond,
		maxBackoff:     15 * time.Second,
		idleTimeout:    40 * time.Second,
		buffer:         1024,
		now:            time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL is the daemon address without credentials, safe to show on screen.
func (c *Client) BaseURL() string { return c.base.Redacted() }

func (c *Client) Queue(ctx context.Context) (api.QueueStats, error) {
	var v api.QueueStats
	return v, c.do(ctx, http.MethodGet, "/admin/queue", nil, &v)
}

func (c *Client) Orders(ctx context.Context, status string, limit int, before int64) (api.OrderPage, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if before > 0 {
		q.Set("before", strconv.FormatInt(before, 10))
	}
	var v api.OrderPage
	return v, c.do(ctx, http.MethodGet, "/admin/orders", q, &v)
}

func (c *Client) Order(ctx context.Context, id int64) (api.Order, error) {
	var v api.Order
	return v, c.do(ctx, http.MethodGet, "/admin/orders/"+strconv.FormatInt(id, 10), nil, &v)
}

func (c *Client) CancelOrder(ctx context.Context, id int64) (api.Order, error) {
	var v api.Order
	return v, c.do(ctx, http.MethodPost, "/admin/orders/"+strconv.FormatInt(id, 10)+"/cancel", nil, &v)
}

// terminateTimeout is how long TerminateOrder waits at least: the daemon gives the
// provider up to 30 s to delete the server before it answers.
const terminateTimeout = 40 * time.Second

// TerminateOrder asks the daemon to delete an active or suspended order's server. It waits longer
// than the other calls (see terminateTimeout): giving up early would report a failure
// for a server the daemon is still deleting.
func (c *Client) TerminateOrder(ctx context.Context, id int64) (api.Order, error) {
	var v api.Order
	return v, c.doWithin(ctx, max(c.requestTimeout, terminateTimeout), http.MethodPost,
		"/admin/orders/"+strconv.FormatInt(id, 10)+"/terminate", nil, nil, &v)
}

func (c *Client) DeadLetters(ctx context.Context, limit int) ([]api.Order, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var v api.DeadLetters
	return v.DeadLetters, c.do(ctx, http.MethodGet, "/admin/dlq", q, &v)
}

func (c *Client) Requeue(ctx context.Context, id int64) (api.Order, error) {
	var v api.Order
	return v, c.do(ctx, http.MethodPost, "/admin/dlq/"+strconv.FormatInt(id, 10)+"/requeue", nil, &v)
}

func (c *Client) RequeueAll(ctx context.Context) (int, error) {
	var v api.RequeueAllResult
	return v.Requeued, c.do(ctx, http.MethodPost, "/admin/dlq/requeue", nil, &v)
}

func (c *Client) PurgeDLQ(ctx context.Context) (int, error) {
	var v api.PurgeResult
	return v.Purged, c.do(ctx, http.MethodDelete, "/admin/dlq", nil, &v)
}

// Plans reads the plan catalogue; the console formats every amount by its currency.
func (c *Client) Plans(ctx context.Context) (api.Catalog, error) {
	var v api.Catalog
	return v, c.do(ctx, http.MethodGet, "/admin/plans", nil, &v)
}

func (c *Client) RateLimits(ctx context.Context, min int) (api.RateLimits, error) {
	q := url.Values{}
	q.Set("min", strconv.Itoa(min))
	var v api.RateLimits
	return v, c.do(ctx, http.MethodGet, "/admin/ratelimits", q, &v)
}

func (c *Client) ResetRateLimit(ctx context.Context, user int64) (bool, error) {
	var v api.ResetResult
	return v.Reset, c.do(ctx, http.MethodDelete, "/admin/ratelimit/"+strconv.FormatInt(user, 10), nil, &v)
}

func (c *Client) Outbox(ctx context.Context, limit int) (api.Outbox, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var v api.Outbox
	return v, c.do(ctx, http.MethodGet, "/admin/outbox", q, &v)
}

func (c *Client) BlogStats(ctx context.Context) (api.BlogStats, error) {
	var v api.BlogStats
	return v, c.do(ctx, http.MethodGet, "/api/admin/stats", nil, &v)
}

func (c *Client) User(ctx context.Context, id int64) (api.User, error) {
	var v api.User
	return v, c.do(ctx, http.MethodGet, "/admin/users/"+strconv.FormatInt(id, 10), nil, &v)
}

// UserOrders reads GET /admin/users/:id/orders, the user's orders newest first.
func (c *Client) UserOrders(ctx context.Context, id int64, limit int) ([]api.Order, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var v api.OrderPage
	return v.Orders, c.do(ctx, http.MethodGet, "/admin/users/"+strconv.FormatInt(id, 10)+"/orders", q, &v)
}

func (c *Client) Deposit(ctx context.Context, id, amount int64) (api.Balance, error) {
	var v api.Balance
	return v, c.doJSON(ctx, http.MethodPost, "/admin/users/"+strconv.FormatInt(id, 10)+"/deposit", map[string]int64{"amount": amount}, &v)
}

func (c *Client) Comments(ctx context.Context, limit int) ([]api.Comment, error) {
	var v api.Comments
	return v.Comments, c.do(ctx, http.MethodGet, "/api/admin/comments", limitQuery(limit), &v)
}

func (c *Client) DeleteComment(ctx context.Context, id uint64) error {
	var v struct{}
	return c.do(ctx, http.MethodDelete, "/api/admin/comments/"+strconv.FormatUint(id, 10), nil, &v)
}

func (c *Client) Inquiries(ctx context.Context, limit int) ([]api.Inquiry, error) {
	var v api.Inquiries
	return v.Inquiries, c.do(ctx, http.MethodGet, "/api/admin/inquiries", limitQuery(limit), &v)
}

func (c *Client) MarkInquiryRead(ctx context.Context, id uint64) (api.Inquiry, error) {
	var v api.Inquiry
	return v, c.do(ctx, http.MethodPost, "/api/admin/inquiries/"+strconv.FormatUint(id, 10)+"/read", nil, &v)
}

func (c *Client) Visitors(ctx context.Context, limit int) ([]api.VisitorPoint, error) {
	var v api.Visitors
	return v.Visitors, c.do(ctx, http.MethodGet, "/api/admin/visitors", limitQuery(limit), &v)
}

func (c *Client) Logs(ctx context.Context, since uint64, level string, limit int) (api.LogPage, error) {
	q := limitQuery(limit)
	if since > 0 {
		q.Set("since", strconv.FormatUint(since, 10))
	}
	if level != "" {
		q.Set("level", level)
	}
	var v api.LogPage
	return v, c.do(ctx, http.MethodGet, "/admin/logs", q, &v)
}

func (c *Client) Reconcile(ctx context.Context) (api.ReconcileReport, error) {
	var v api.ReconcileReport
	return v, c.do(ctx, http.MethodGet, "/admin/reconcile", nil, &v)
}

// RunReconcile waits as long as a termination does: the reconciler lists and deletes
// servers at the providers before it answers.
func (c *Client) RunReconcile(ctx context.Context) (api.ReconcileReport, error) {
	var v api.ReconcileReport
	return v, c.doWithin(ctx, max(c.requestTimeout, terminateTimeout), http.MethodPost, "/admin/reconcile", nil, nil, &v)
}

func limitQuery(limit int) url.Values {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return q
}

func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawQuery = q.Encode()
	return u.String()
}

func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, q), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if c.role != "" {
		req.Header.Set("X-Hangar-Role", c.role)
	}
	if c.actor != "" {
		req.Header.Set("X-Hangar-Actor", c.actor)
	}
	return req, nil
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, out any) error {
	return c.doWithin(ctx, c.requestTimeout, method, path, q, nil, out)
}

// doJSON sends in as the JSON body.
func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	return c.doWithin(ctx, c.requestTimeout, method, path, nil, in, out)
}

func (c *Client) doWithin(ctx context.Context, timeout time.Duration, method, path string, q url.Values, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var reqBody io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		reqBody = bytes.NewReader(b)
	}
	req, err := c.newRequest(ctx, method, path, q, reqBody)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, stripURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return statusError(resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s: decoding answer: %w", method, path, err)
	}
	return nil
}

func statusError(status int, body []byte) error {
	e := &api.Error{Status: status}
	if json.Unmarshal(bytes.TrimSpace(body), e) != nil || e.Code == "" {
		e.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	e.Status = status
	return e
}

// stripURL drops the request URL from transport errors: it is noise on a console
// banner that already names the daemon.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
