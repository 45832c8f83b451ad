package common

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/keymap"
	"github.com/hangarhq/hangar/tui/styles"
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
	// User is one user's balance and ledger; UserOrders their newest orders.
	User(ctx context.Context, id int64) (api.User, error)
	UserOrders(ctx context.Context, id int64, limit int) ([]api.Order, error)
	// Deposit credits amount minor units of the catalogue's currency to user id.
	Deposit(ctx context.Context, id, amount int64) (api.Balance, error)
	// Comments and Inquiries are the blog's, newest first.
	Comments(ctx context.Context, limit int) ([]api.Comment, error)
	DeleteComment(ctx context.Context, id uint64) error
	Inquiries(ctx context.Context, limit int) ([]api.Inquiry, error)
	MarkInquiryRead(ctx context.Context, id uint64) (api.Inquiry, error)
	// Visitors are the visitor log's newest hits with their coordinates, for the map.
	Visitors(ctx context.Context, limit int) ([]api.VisitorPoint, error)
	// Logs are the daemon's own log records after since at level or above ("" for
	// all), secrets already masked by the daemon.
	Logs(ctx context.Context, since uint64, level string, limit int) (api.LogPage, error)
	// Reconcile is the reconciler's last findings; RunReconcile runs it now, which
	// deletes what the daemon is allowed to delete, and answers the new findings.
	Reconcile(ctx context.Context) (api.ReconcileReport, error)
	RunReconcile(ctx context.Context) (api.ReconcileReport, error)
	// Whoami is the console's role ("operator" or "viewer") and the name the audit log
	// records it by; a viewer's console refuses every action before sending it.
	Whoami(ctx context.Context) (api.Whoami, error)
	// PauseQueue and ResumeQueue stop and restart the daemon starting provisioning
	// attempts; orders are accepted either way.
	PauseQueue(ctx context.Context) (api.QueuePause, error)
	ResumeQueue(ctx context.Context) (api.QueuePause, error)
	// Audit is the audit log newest first, below entry before (0: the newest).
	Audit(ctx context.Context, limit int, before uint64) (api.AuditPage, error)
	// Broadcasts are the newest limit broadcasts, newest first. CreateBroadcast sends
	// text, exactly as given, to every user who has talked to the bot; CancelBroadcast
	// stops broadcast id (an ended one is refused with a 409).
	Broadcasts(ctx context.Context, limit int) ([]api.Broadcast, error)
	CreateBroadcast(ctx context.Context, text string) (api.Broadcast, error)
	CancelBroadcast(ctx context.Context, id int64) (api.Broadcast, error)
	// Events follows the live feed until ctx ends, reconnecting by itself; it reports
	// the stream's health as api.EventConn items and closes the channel at the end.
	Events(ctx context.Context) (<-chan api.Event, error)
}

// Common is what every page shares; one per program, so per SSH session.
type Common struct {
	Ctx  context.Context
	D    Daemon
	St   styles.Styles
	Km   keymap.KeyMap
	Now  func() time.Time
	Spin *spinner.Model
	// Currency is the catalogue's, for every amount on screen; "" until it is read.
	Currency string
	// Role is the console's role as the daemon knows it ("" until it says).
	Role string
	// Down is set while the banner is up: pages say they wait instead of spinning.
	Down   bool
	Width  int
	Height int
}

// View is one page of the console. Only the active page gets keys; every page sees
// the other messages, so data keeps flowing into hidden pages.
type View interface {
	Title() string
	Refresh() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	HandleKey(msg tea.KeyMsg) tea.Cmd
	Render() string
	SetSize(w, h int)
	Filter() string
	SetFilter(string)
	Keys() []key.Binding
	// Modal reports an open detail pane, which esc closes before anything else.
	Modal() bool
}

// ShortKeyer is a page whose one-line help is a shorter list than its full help.
type ShortKeyer interface{ ShortKeys() []key.Binding }

// LoadingLine is what a page shows before its first answer.
func (c *Common) LoadingLine(what string) string {
	if c.Down {
		return c.St.Muted.Render("no " + what + " yet: waiting for the daemon")
	}
	return c.Spin.View() + " loading " + what + "…"
}

// ReadOnly reports a viewer's console: it changes nothing.
func (c *Common) ReadOnly() bool { return c.Role == RoleViewer }

// RoleViewer is the role that sees everything and changes nothing.
const RoleViewer = "viewer"

// Capturer is a page that is reading typed text (a user id, an amount): while it
// captures, every key but ctrl+c goes to it, digits and q included.
type Capturer interface{ Capturing() bool }
