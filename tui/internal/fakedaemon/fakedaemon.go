package fakedaemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hangarhq/hangar/http/api"
)

// ErrUnreachable is what every call returns while the fake is down; it is not an
// *api.Error, which is how the console recognises a daemon that was not reached.
var ErrUnreachable = errors.New("dial tcp 127.0.0.1:8080: connect: connection refused")

type Daemon struct {
	mu     sync.Mutex
	calls  []string
	down   bool
	events chan api.Event

	Stats     api.QueueStats
	AllOrders []api.Order
	DLQ       []api.Order
	Limits    api.RateLimits
	Mail      api.Outbox
	Blog      api.BlogStats
	Catalog   api.Catalog
	Users     map[int64]api.User
	Blogs     []api.Comment // newest first
	Inqs      []api.Inquiry // newest first
	Hits      []api.VisitorPoint
	LogRecs   []api.LogRecord // oldest first, numbered from 1
	Report    api.ReconcileReport
	Who       api.Whoami       // what Whoami answers: an operator unless a test says otherwise
	AuditLog  []api.AuditEntry // newest first
	Casts     []api.Broadcast  // newest first
	// Recipients is the total a new broadcast gets (0: refused, nobody to send to).
	Recipients int
	created    []string // texts CreateBroadcast was given
	changed    chan string
	fail       map[string]error         // method name -> error every call of it returns
	gates      map[string]chan struct{} // method name -> closed when the call may answer
}

// New returns a fake seeded with Seed's data.
func New() *Daemon {
	d := &Daemon{events: make(chan api.Event, 4096), changed: make(chan string, 1024),
		fail: map[string]error{}, gates: map[string]chan struct{}{}}
	Seed(d)
	return d
}

// Calls returns the recorded calls, such as "Requeue 41" or "PurgeDLQ".
func (d *Daemon) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// Called reports whether a call was recorded.
func (d *Daemon) Called(call string) bool { return slices.Contains(d.Calls(), call) }

// WaitCall blocks until call is recorded or the timeout ends.
func (d *Daemon) WaitCall(call string, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		if d.Called(call) {
			return true
		}
		select {
		case <-d.changed:
		case <-deadline:
			return d.Called(call)
		}
	}
}

// Fail makes every later call of method (such as "TerminateOrder") return err, as a
// daemon that refuses it (an *api.Error) or a call that did not get through (any other
// error). A nil err restores normal answers.
func (d *Daemon) Fail(method string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		delete(d.fail, method)
		return
	}
	d.fail[method] = err
}

// Hold makes later calls of method wait, once recorded, until release is called, so a
// test can see what the console shows while a call is in flight. The wait also ends
// with the call's context.
func (d *Daemon) Hold(method string) (release func()) {
	gate := make(chan struct{})
	d.mu.Lock()
	d.gates[method] = gate
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			if d.gates[method] == gate {
				delete(d.gates, method)
			}
			d.mu.Unlock()
			close(gate)
		})
	}
}

// record notes a call; its error is the one the call must return, if any.
func (d *Daemon) record(format string, args ...any) error {
	return d.recordCtx(context.Background(), format, args...)
}

func (d *Daemon) recordCtx(ctx context.Context, format string, args ...any) error {
	d.mu.Lock()
	c := fmt.Sprintf(format, args...)
	method, _, _ := strings.Cut(c, " ")
	d.calls = append(d.calls, c)
	select {
	case d.changed <- c:
	default:
	}
	gate, down, fail := d.gates[method], d.down, d.fail[method]
	d.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if down {
		return ErrUnreachable
	}
	return fail
}

// answer records the call and, unless the fake is down, returns get's result, read
// under the lock.
func answer[T any](d *Daemon, get func() T, format string, args ...any) (T, error) {
	if err := d.record(format, args...); err != nil {
		var zero T
		return zero, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return get(), nil
}

// SetDown makes every call fail as if the daemon were gone.
func (d *Daemon) SetDown(down bool) {
	d.mu.Lock()
	d.down = down
	d.mu.Unlock()
}

// Send pushes an event to the console's feed.
func (d *Daemon) Send(evs ...api.Event) {
	for _, ev := range evs {
		d.events <- ev
	}
}

func (d *Daemon) Queue(ctx context.Context) (api.QueueStats, error) {
	return answer(d, func() api.QueueStats { return d.Stats }, "Queue")
}

// Orders pages like the daemon: newest first, ids below before (when set), at most
// limit (when set), and next_before is the last id of a full page. The call is
// recorded as "Orders", then the status and "before <id>" when they are set:
// "Orders pending before 51".
func (d *Daemon) Orders(ctx context.Context, status string, limit int, before int64) (api.OrderPage, error) {
	call := "Orders"
	if status != "" {
		call += " " + status
	}
	if before > 0 {
		call += fmt.Sprintf(" before %d", before)
	}
	return answer(d, func() api.OrderPage {
		var out []api.Order
		for _, o := range d.AllOrders {
			if (status == "" || o.Status == status) && (before <= 0 || o.OrderID < before) {
				out = append(out, o)
			}
		}
		slices.SortStableFunc(out, func(a, b api.Order) int { return cmp.Compare(b.OrderID, a.OrderID) })
		var next int64
		if limit > 0 && len(out) >= limit {
			out = out[:limit]
			next = out[limit-1].OrderID
		}
		return api.OrderPage{Orders: out, NextBefore: next}
	}, "%s", call)
}

func (d *Daemon) Order(ctx context.Context, id int64) (api.Order, error) {
	if err := d.record("Order %d", id); err != nil {
		return api.Order{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, o := range append(slices.Clone(d.AllOrders), d.DLQ...) {
		if o.OrderID == id {
			return o, nil
		}
	}
	return api.Order{}, &api.Error{Status: 404, Code: "not_found", Message: "no such order"}
}

func (d *Daemon) CancelOrder(ctx context.Context, id int64) (api.Order, error) {
	if err := d.record("CancelOrder %d", id); err != nil {
		return api.Order{}, err
	}
	return api.Order{OrderID: id, Status: "cancelled"}, nil
}

// TerminateOrder turns an active order terminated, as the daemon does once the
// provider has deleted the server; any other status is refused with a 409 as the
// admin API answers it.
func (d *Daemon) TerminateOrder(ctx context.Context, id int64) (api.Order, error) {
	if err := d.recordCtx(ctx, "TerminateOrder %d", id); err != nil {
		return api.Order{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.AllOrders, func(o api.Order) bool { return o.OrderID == id })
	if i < 0 {
		return api.Order{}, &api.Error{Status: 404, Code: "not_found", Message: "no such order"}
	}
	o := &d.AllOrders[i]
	if o.Status != "active" {
		return api.Order{}, &api.Error{Status: 409, Code: "conflict",
			Message: fmt.Sprintf("the order is not in a state that allows this: order %d is %s", id, o.Status)}
	}
	o.Status, o.UpdatedAt = "terminated", Now
	o.History = append(slices.Clone(o.History), api.HistoryEntry{At: Now, Event: "terminated", Status: "terminated", Attempt: o.Attempts})
	return *o, nil
}

// SetStatus changes a stored order's status, as something other than the console
// would (a user's chat command, the queue).
func (d *Daemon) SetStatus(id int64, status string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.AllOrders {
		if d.AllOrders[i].OrderID == id {
			d.AllOrders[i].Status = status
		}
	}
}

func (d *Daemon) DeadLetters(ctx context.Context, limit int) ([]api.Order, error) {
	return answer(d, func() []api.Order {
		out := slices.Clone(d.DLQ)
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return out
	}, "DeadLetters")
}

func (d *Daemon) Requeue(ctx context.Context, id int64) (api.Order, error) {
	return answer(d, func() api.Order {
		d.DLQ = slices.DeleteFunc(d.DLQ, func(o api.Order) bool { return o.OrderID == id })
		return api.Order{OrderID: id, Status: "pending"}
	}, "Requeue %d", id)
}

// SetDeadLetters replaces the dead-letter list, as the queue would between two reads.
func (d *Daemon) SetDeadLetters(orders ...api.Order) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.DLQ = orders
}

// SetWindows replaces the open rate-limit windows.
func (d *Daemon) SetWindows(ws ...api.RateWindow) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Limits.Windows = ws
}

// AddOrders puts orders at the top of the list, as new orders would arrive.
func (d *Daemon) AddOrders(orders ...api.Order) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.AllOrders = append(slices.Clone(orders), d.AllOrders...)
}

func (d *Daemon) PurgeDLQ(ctx context.Context) (int, error) {
	return answer(d, d.emptyDLQ, "PurgeDLQ")
}

// emptyDLQ is what purging does to the fake's list.
func (d *Daemon) emptyDLQ() int {
	n := len(d.DLQ)
	d.DLQ = nil
	return n
}

func (d *Daemon) RateLimits(ctx context.Context, min int) (api.RateLimits, error) {
	return answer(d, func() api.RateLimits {
		rl := d.Limits
		rl.Windows = slices.Clone(rl.Windows)
		return rl
	}, "RateLimits")
}

func (d *Daemon) ResetRateLimit(ctx context.Context, user int64) (bool, error) {
	return answer(d, func() bool {
		d.Limits.Windows = slices.DeleteFunc(d.Limits.Windows, func(w api.RateWindow) bool { return w.UserID == user })
		return true
	}, "ResetRateLimit %d", user)
}

func (d *Daemon) Outbox(ctx context.Context, limit int) (api.Outbox, error) {
	return answer(d, func() api.Outbox { return d.Mail }, "Outbox")
}

func (d *Daemon) BlogStats(ctx context.Context) (api.BlogStats, error) {
	return answer(d, func() api.BlogStats { return d.Blog }, "BlogStats")
}

func (d *Daemon) Plans(ctx context.Context) (api.Catalog, error) {
	return answer(d, func() api.Catalog { return d.Catalog }, "Plans")
}

// Events hands out the one feed channel; the fake never closes it, like a daemon
// that keeps running, so tests end by quitting the program.
func (d *Daemon) Events(ctx context.Context) (<-chan api.Event, error) {
	if err := d.record("Events"); err != nil {
		return nil, err
	}
	return d.events, nil
}

// User answers a user's balance and ledger; a user never seen has nothing, as the
// daemon answers.
func (d *Daemon) User(ctx context.Context, id int64) (api.User, error) {
	return answer(d, func() api.User {
		u, ok := d.Users[id]
		if !ok {
			return api.User{Balance: api.Balance{UserID: id}, Ledger: []api.LedgerEntry{}}
		}
		u.Ledger = slices.Clone(u.Ledger)
		return u
	}, "User %d", id)
}

// UserOrders is the user's orders among AllOrders, newest first.
func (d *Daemon) UserOrders(ctx context.Context, id int64, limit int) ([]api.Order, error) {
	return answer(d, func() []api.Order {
		var out []api.Order
		for _, o := range d.AllOrders {
			if o.UserID == id {
				out = append(out, o)
			}
		}
		slices.SortStableFunc(out, func(a, b api.Order) int { return cmp.Compare(b.OrderID, a.OrderID) })
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return out
	}, "UserOrders %d", id)
}

// Deposit credits the user and writes the ledger entry, as the daemon does; it is
// recorded as "Deposit <user> <amount>".
func (d *Daemon) Deposit(ctx context.Context, id, amount int64) (api.Balance, error) {
	return answer(d, func() api.Balance {
		if d.Users == nil {
			d.Users = map[int64]api.User{}
		}
		u := d.Users[id]
		u.Balance.UserID = id
		u.Balance.Available += amount
		u.Balance.UpdatedAt = Now
		u.Ledger = append(slices.Clone(u.Ledger), api.LedgerEntry{Seq: uint64(len(u.Ledger) + 1), UserID: id, Kind: "deposit",
			Amount: amount, Available: u.Balance.Available, Held: u.Balance.Held, At: Now})
		d.Users[id] = u
		return u.Balance
	}, "Deposit %d %d", id, amount)
}

func (d *Daemon) Comments(ctx context.Context, limit int) ([]api.Comment, error) {
	return answer(d, func() []api.Comment { return firstN(d.Blogs, limit) }, "Comments")
}

// DeleteComment removes a comment; one that is gone answers 404 as the daemon does.
func (d *Daemon) DeleteComment(ctx context.Context, id uint64) error {
	if err := d.record("DeleteComment %d", id); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.Blogs)
	d.Blogs = slices.DeleteFunc(slices.Clone(d.Blogs), func(c api.Comment) bool { return c.ID == id })
	if len(d.Blogs) == n {
		return &api.Error{Status: 404, Code: "not_found", Message: "no such comment"}
	}
	return nil
}

// SetComments replaces the comments, newest first, as readers would between reads.
func (d *Daemon) SetComments(cs ...api.Comment) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Blogs = cs
}

func (d *Daemon) Inquiries(ctx context.Context, limit int) ([]api.Inquiry, error) {
	return answer(d, func() []api.Inquiry { return firstN(d.Inqs, limit) }, "Inquiries")
}

func (d *Daemon) MarkInquiryRead(ctx context.Context, id uint64) (api.Inquiry, error) {
	if err := d.record("MarkInquiryRead %d", id); err != nil {
		return api.Inquiry{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Inqs = slices.Clone(d.Inqs)
	for i := range d.Inqs {
		if d.Inqs[i].ID == id {
			d.Inqs[i].Read = true
			return d.Inqs[i], nil
		}
	}
	return api.Inquiry{}, &api.Error{Status: 404, Code: "not_found", Message: "no such inquiry"}
}

// SetInquiries replaces the inquiries, newest first.
func (d *Daemon) SetInquiries(qs ...api.Inquiry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Inqs = qs
}

func (d *Daemon) Visitors(ctx context.Context, limit int) ([]api.VisitorPoint, error) {
	return answer(d, func() []api.VisitorPoint { return firstN(d.Hits, limit) }, "Visitors")
}

// Logs pages LogRecs as the daemon's ring does: after since, at level or above, the
// newest limit of them, oldest first.
func (d *Daemon) Logs(ctx context.Context, since uint64, level string, limit int) (api.LogPage, error) {
	return answer(d, func() api.LogPage {
		p := api.LogPage{Records: []api.LogRecord{}}
		for _, r := range d.LogRecs {
			p.Last = max(p.Last, r.Seq)
			if r.Seq > since && levelRank(r.Level) >= levelRank(level) {
				p.Records = append(p.Records, r)
			}
		}
		if limit > 0 && len(p.Records) > limit {
			p.Records = p.Records[len(p.Records)-limit:]
		}
		return p
	}, "Logs %d %s", since, level)
}

// AddLogs appends records, numbering them on from the last.
func (d *Daemon) AddLogs(recs ...api.LogRecord) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range recs {
		r.Seq = uint64(len(d.LogRecs) + 1)
		d.LogRecs = append(d.LogRecs, r)
	}
}

// levelRank orders levels as slog does; "" (no level asked) ranks below them all.
func levelRank(l string) int {
	if r, ok := map[string]int{"DEBUG": -4, "INFO": 0, "WARN": 4, "ERROR": 8}[strings.ToUpper(l)]; ok {
		return r
	}
	return -100
}

func (d *Daemon) Reconcile(ctx context.Context) (api.ReconcileReport, error) {
	return answer(d, func() api.ReconcileReport { return d.Report }, "Reconcile")
}

// RunReconcile deletes the duplicates (and the orphans when allowed) the last report
// listed, as the daemon's reconciler would, and answers the new report.
func (d *Daemon) RunReconcile(ctx context.Context) (api.ReconcileReport, error) {
	return answer(d, func() api.ReconcileReport {
		r := d.Report
		r.At, r.Deleted = Now, 0
		mark := func(fs []api.ReconcileFinding, del bool) []api.ReconcileFinding {
			fs = slices.Clone(fs)
			for i := range fs {
				if del && !fs[i].Deleted {
					fs[i].Deleted = true
					r.Deleted++
				}
			}
			return fs
		}
		r.Duplicates, r.Orphans = mark(r.Duplicates, true), mark(r.Orphans, r.DeleteOrphans)
		d.Report = r
		return r
	}, "RunReconcile")
}

func firstN[T any](s []T, n int) []T {
	s = slices.Clone(s)
	if n > 0 && len(s) > n {
		s = s[:n]
	}
	return s
}
