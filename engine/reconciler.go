package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/store"
)

// ReconcileConfig tunes the reconciler.
type ReconcileConfig struct {
	// Every is how often every provider's hangar-order-* servers are listed and
	// compared with the orders (default 10 minutes; negative: only on demand).
	Every time.Duration
	// DeleteOrphans deletes servers whose order is missing, failed, cancelled or
	// terminated. Off by default: they are reported and left to the operator.
	// Duplicates of a live order are always reduced to one.
	DeleteOrphans bool
	// RetryTerminations is how often a termination the provider refused is tried again
	// (default 30 s).
	RetryTerminations time.Duration
}

func (c ReconcileConfig) every() time.Duration { return cmp.Or(c.Every, 10*time.Minute) }

func (c ReconcileConfig) retryEvery() time.Duration {
	return cmp.Or(c.RetryTerminations, 30*time.Second)
}

// ReconcileStore keeps the last findings, and finds terminations left unconfirmed.
type ReconcileStore interface {
	PutReconcileReport(b []byte) error
	ReconcileReport() ([]byte, error)
	GetOrder(id int64) (store.Order, error)
	UpdateOrder(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, error)
	OrdersWithStatus(status string, fn func(store.Order) error) error
	OrderIDsPast(id int64) (advanced bool, err error)
}

// ReconcileReport is what one reconciliation found (GET /admin/reconcile).
type ReconcileReport struct {
	At            time.Time          `json:"at,omitzero"` // absent before the first run
	Providers     []string           `json:"providers"`
	Servers       int                `json:"servers"`
	Duplicates    []ReconcileFinding `json:"duplicates"`
	Orphans       []ReconcileFinding `json:"orphans"`
	Deleted       int                `json:"deleted"`
	DeleteOrphans bool               `json:"delete_orphans"`
	Errors        []string           `json:"errors,omitempty"`
}

// ReconcileFinding is one server that should not exist.
type ReconcileFinding struct {
	Provider    string    `json:"provider"`
	InstanceID  string    `json:"instance_id"`
	Label       string    `json:"label"`
	IPv4        string    `json:"ipv4,omitempty"`
	Created     time.Time `json:"created,omitzero"`
	OrderID     int64     `json:"order_id,omitempty"`
	OrderStatus string    `json:"order_status,omitempty"`
	// Kept is the server the order keeps (duplicates only).
	Kept    string `json:"kept,omitempty"`
	Reason  string `json:"reason"`
	Deleted bool   `json:"deleted"`
	Error   string `json:"error,omitempty"`
}

// Messages the reconciler understands.
type (
	reconcileNow     struct{} // answered with reconcileResult
	reconcileTick    struct{}
	terminationTick  struct{}
	retryTermination struct{ id int64 }
	reconcileResult  struct {
		report ReconcileReport
		err    error
	}
)

const (
	reconcilerKind = "reconciler"
	reconcilerID   = "main"
	// labelPrefix is what every server hangar creates is labelled with (InstanceLabel).
	labelPrefix = "hangar-order-"
	listTimeout = 2 * time.Minute
)

type reconcilerDeps struct {
	ctx       context.Context
	cfg       Config
	store     ReconcileStore
	providers map[string]Provider
	metrics   *reconcileMetrics
	feed      *feedRef
	outbox    *actor.PID
	scrub     scrubber
	// passwords are swept on the termination tick: destroyed once past their window.
	passwords PasswordSource
	notes     notes
}

// reconciler compares what the providers hold with what the orders say. A crash
// during a create, a create that timed out and finished anyway, or a retry that did
// not see a slow create can each leave a server no order accounts for, which costs
// money until someone deletes it. It also retries terminations the provider refused
// until the provider confirms them.
type reconciler struct {
	d           reconcilerDeps
	ticks       []actor.SendRepeater
	terminating map[int64]bool
	last        string // the previous findings, so the admin chat hears of a change once
}

func newReconciler(d reconcilerDeps) actor.Producer {
	return func() actor.Receiver { return &reconciler{d: d, terminating: map[int64]bool{}} }
}

func (r *reconciler) Receive(c *actor.Context) {
	switch msg := c.Message().(type) {
	case actor.Started:
		if every := r.d.cfg.Reconcile.every(); every > 0 {
			r.ticks = append(r.ticks, c.SendRepeat(c.PID(), reconcileTick{}, every))
		}
		r.ticks = append(r.ticks, c.SendRepeat(c.PID(), terminationTick{}, r.d.cfg.Reconcile.retryEvery()))
		r.loadTerminating()
	case actor.Stopped:
		for _, t := range r.ticks {
			t.Stop()
		}
	case reconcileTick:
		if r.d.ctx.Err() == nil {
			r.runSafely(c)
		}
	case reconcileNow:
		c.Respond(r.runSafely(c))
	case retryTermination:
		r.terminating[msg.id] = true
	case terminationTick:
		if r.d.ctx.Err() == nil {
			r.retryTerminations(c)
			r.sweepPasswords()
		}
	}
}

func (r *reconciler) runSafely(c *actor.Context) (res reconcileResult) {
	defer func() {
		if v := recover(); v != nil {
			r.d.metrics.errors.Inc()
			r.d.cfg.Logger.Error("reconciler panicked", "panic", fmt.Sprint(v))
			res = reconcileResult{err: fmt.Errorf("reconcile: internal error: %v", v)}
		}
	}()
	rep := r.run()
	r.report(c, rep)
	return reconcileResult{report: rep}
}

// run lists each provider's servers and sorts out the ones no live order accounts for.
func (r *reconciler) run() ReconcileReport {
	rep := ReconcileReport{At: r.d.cfg.Clock.Now(), DeleteOrphans: r.d.cfg.Reconcile.DeleteOrphans,
		Duplicates: []ReconcileFinding{}, Orphans: []ReconcileFinding{}}
	for _, name := range sortedKeys(r.d.providers) {
		lister, ok := r.d.providers[name].(cloud.Lister)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(r.d.ctx, listTimeout)
		servers, err := lister.List(ctx, labelPrefix)
		cancel()
		if err != nil {
			r.d.metrics.errors.Inc()
			rep.Errors = append(rep.Errors, r.d.scrub.text(err.Error()))
			continue
		}
		rep.Providers = append(rep.Providers, name)
		rep.Servers += len(servers)
		r.sortOut(&rep, name, servers)
	}
	return rep
}

func (r *reconciler) sortOut(rep *ReconcileReport, provider string, servers []cloud.Instance) {
	groups := map[int64][]cloud.Instance{}
	for _, in := range servers {
		id, err := strconv.ParseInt(strings.TrimPrefix(in.Label, labelPrefix), 10, 64)
		if err != nil || id <= 0 || InstanceLabel(id) != in.Label {
			id = 0 // a label hangar never makes: no order can own it
		}
		groups[id] = append(groups[id], in)
	}
	// Labels of orders this store does not have: after a restore from an older backup,
	// the orders the backup missed. New orders must not be given those ids: on Linode
	// the label is taken, and the order could never have a server.
	var lost int64
	defer func() {
		if advanced, err := r.d.store.OrderIDsPast(lost); err != nil {
			// In the report's errors too: a reconcile after a restore that could not
			// move the ids is not done (serve keeps the restore's mark and runs it again).
			r.d.metrics.errors.Inc()
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: cannot move new order ids past label %s: %s", provider, InstanceLabel(lost), r.d.scrub.text(err.Error())))
			r.d.cfg.Logger.Error("reconcile: cannot move order ids past the provider's labels", "past", lost, "err", err)
		} else if advanced {
			r.d.cfg.Logger.Warn("reconcile: new order ids now start above a provider's hangar-order label no order here has (a restore from an older backup?)", "past", lost, "provider", provider)
		}
	}()
	for _, id := range sortedKeys(groups) {
		group := groups[id]
		finding := func(in cloud.Instance, o store.Order, reason string) ReconcileFinding {
			return ReconcileFinding{Provider: provider, InstanceID: in.ID, Label: in.Label, IPv4: in.IPv4, Created: in.Created,
				OrderID: id, OrderStatus: o.Status, Reason: reason}
		}
		o, err := r.d.store.GetOrder(id)
		if err == nil && id != 0 {
			// A server older than its order is not its: an orphan, never a duplicate,
			// and only reported, even with DeleteOrphans: it may be another install's,
			// or this one's seen through a clock that ran ahead. The server the order
			// records is its own whatever the times say.
			own := group[:0:0]
			for _, in := range group {
				if in.ID != o.InstanceID && madeBeforeOrder(in, o) {
					rep.Orphans = append(rep.Orphans, finding(in, o,
						"made before its order: the label is reused (a restored backup, or another hangar on this account); not deleted"))
					continue
				}
				own = append(own, in)
			}
			if group = own; len(group) == 0 {
				continue
			}
		}
		switch {
		case id == 0 || errors.Is(err, store.ErrNotFound):
			lost = max(lost, id)
			for _, in := range group {
				rep.Orphans = append(rep.Orphans, r.orphan(provider, finding(in, store.Order{}, "no such order")))
			}
		case err != nil:
			r.d.metrics.errors.Inc()
			rep.Errors = append(rep.Errors, fmt.Sprintf("order %d: %v", id, err))
		case o.Provider != provider:
			for _, in := range group {
				rep.Orphans = append(rep.Orphans, r.orphan(provider, finding(in, o, "the order is at "+o.Provider)))
			}
		case o.Status == store.OrderFailed || o.Status == store.OrderCancelled || o.Status == store.OrderTerminated:
			for _, in := range group {
				rep.Orphans = append(rep.Orphans, r.orphan(provider, finding(in, o, "the order is "+o.Status)))
			}
		case len(group) < 2:
		case o.Status == store.OrderActive && !o.Terminating:
			keep := cloud.Keeper(group, o.InstanceID)
			for i, in := range group {
				if i != keep {
					f := finding(in, o, "a second server for a running order")
					f.Kept = group[keep].ID
					rep.Duplicates = append(rep.Duplicates, r.remove(provider, f))
				}
			}
		default:
			// Provisioning or waiting: the order keeps one itself when it finds them.
			keep := cloud.Keeper(group, o.InstanceID)
			for i, in := range group {
				if i != keep {
					f := finding(in, o, "a second server for an order in progress; it keeps one when it finds them")
					f.Kept = group[keep].ID
					rep.Duplicates = append(rep.Duplicates, f)
				}
			}
		}
	}
	for _, f := range append(slices.Clone(rep.Duplicates), rep.Orphans...) {
		if f.Deleted {
			rep.Deleted++
		}
	}
}

func (r *reconciler) orphan(provider string, f ReconcileFinding) ReconcileFinding {
	if !r.d.cfg.Reconcile.DeleteOrphans {
		return f
	}
	return r.remove(provider, f)
}

func (r *reconciler) remove(provider string, f ReconcileFinding) ReconcileFinding {
	ctx, cancel := context.WithTimeout(r.d.ctx, listTimeout)
	defer cancel()
	if err := r.d.providers[provider].Delete(ctx, f.InstanceID); err != nil {
		r.d.metrics.errors.Inc()
		f.Error = r.d.scrub.text(err.Error())
		r.d.cfg.Logger.Warn("reconcile: could not delete a server", "provider", provider, "instance", f.InstanceID, "err", f.Error)
		return f
	}
	f.Deleted = true
	r.d.metrics.deleted.Inc()
	r.d.cfg.Logger.Warn("reconcile: deleted a server", "provider", provider, "instance", f.InstanceID, "label", f.Label, "reason", f.Reason)
	return f
}

// report records the findings where operators look: the store (GET /admin/reconcile),
// /metrics, the live feed, and the admin chat when they changed.
func (r *reconciler) report(c *actor.Context, rep ReconcileReport) {
	live := func(fs []ReconcileFinding) (n int) {
		for _, f := range fs {
			if !f.Deleted {
				n++
			}
		}
		return n
	}
	r.d.metrics.duplicates.Set(float64(live(rep.Duplicates)))
	r.d.metrics.orphans.Set(float64(live(rep.Orphans)))
	r.d.metrics.servers.Set(float64(rep.Servers))
	r.d.metrics.lastRun.Set(float64(rep.At.Unix()))
	if b, err := json.Marshal(rep); err == nil {
		if err := r.d.store.PutReconcileReport(b); err != nil {
			r.d.cfg.Logger.Error("reconcile: could not store the findings", "err", err)
		}
	}
	r.d.feed.publish(c, func() Event { return Event{Type: "reconcile", Data: rep} })
	if len(rep.Duplicates)+len(rep.Orphans) > 0 {
		r.d.cfg.Logger.Warn("reconcile: servers no live order accounts for", "duplicates", len(rep.Duplicates),
			"orphans", len(rep.Orphans), "deleted", rep.Deleted)
	}
	summary := r.summary(rep)
	if summary != r.last && r.d.cfg.AdminChatID != 0 && summary != "" {
		c.Send(r.d.outbox, sendTransient{msg: htmlMessage(r.d.cfg.AdminChatID, summary)})
	}
	r.last = summary
}

func (r *reconciler) summary(rep ReconcileReport) string {
	if len(rep.Duplicates)+len(rep.Orphans) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "🧹 <b>Reconcile</b>: %d duplicate and %d orphaned servers (%d deleted)", len(rep.Duplicates), len(rep.Orphans), rep.Deleted)
	for i, f := range append(slices.Clone(rep.Duplicates), rep.Orphans...) {
		if i == 10 {
			sb.WriteString("\n…")
			break
		}
		state := "left in place"
		if f.Deleted {
			state = "deleted"
		}
		fmt.Fprintf(&sb, "\n%s <code>%s</code> %s: %s (%s)", html.EscapeString(f.Provider), html.EscapeString(f.InstanceID),
			html.EscapeString(f.Label), html.EscapeString(f.Reason), state)
	}
	if !rep.DeleteOrphans && len(rep.Orphans) > 0 {
		sb.WriteString("\nOrphans are deleted only with --reconcile-delete-orphans.")
	}
	return sb.String()
}

// sweepPasswords destroys the root passwords no one may ask for any more, and their keys.
func (r *reconciler) sweepPasswords() {
	if r.d.passwords == nil {
		return
	}
	live := func(id int64) bool {
		o, err := r.d.store.GetOrder(id)
		if err != nil {
			return !errors.Is(err, store.ErrNotFound) // keep it while the store cannot say
		}
		return o.Status == store.OrderPending || o.Status == store.OrderProvisioning || o.Status == store.OrderActive
	}
	if err := r.d.passwords.Sweep(r.d.cfg.Clock.Now(), r.d.cfg.Secrets.window(), live); err != nil {
		r.d.cfg.Logger.Error("passwords: sweep failed; will retry", "err", err)
	}
}

// loadTerminating finds the terminations a previous run left unconfirmed.
func (r *reconciler) loadTerminating() {
	err := r.d.store.OrdersWithStatus(store.OrderActive, func(o store.Order) error {
		if o.Terminating {
			r.terminating[o.ID] = true
		}
		return nil
	})
	if err != nil {
		r.d.cfg.Logger.Error("reconcile: could not read unconfirmed terminations", "err", err)
	}
}

// retryTerminations asks the provider again to delete each server whose deletion was
// refused, until it confirms; then the order is terminated and its owner told.
func (r *reconciler) retryTerminations(c *actor.Context) {
	defer func() {
		if v := recover(); v != nil {
			r.d.metrics.errors.Inc()
			r.d.cfg.Logger.Error("reconciler panicked while retrying terminations", "panic", fmt.Sprint(v))
		}
	}()
	for _, id := range sortedKeys(r.terminating) {
		o, err := r.d.store.GetOrder(id)
		if err != nil || o.Status != store.OrderActive || !o.Terminating {
			delete(r.terminating, id)
			continue
		}
		prov, ok := r.d.providers[o.Provider]
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(r.d.ctx, listTimeout)
		err = prov.Delete(ctx, o.InstanceID)
		cancel()
		if err != nil {
			r.d.cfg.Logger.Warn("terminate: provider refused again; will retry", "order", id, "err", r.d.scrub.text(err.Error()))
			continue
		}
		done, err := finishTermination(r.d.store, r.d.cfg.Clock.Now(), o, r.d.notes.terminated(o))
		if err != nil {
			r.d.cfg.Logger.Error("terminate: server deleted but the order could not be updated; will retry", "order", id, "err", err)
			continue
		}
		delete(r.terminating, id)
		c.Send(r.d.outbox, pokeOutbox{})
		r.d.feed.publish(c, func() Event { return orderFeedEvent(done, "terminated", r.d.cfg.Clock.Now()) })
	}
}

// finishTermination marks an order whose server the provider has deleted.
func finishTermination(st interface {
	UpdateOrder(id int64, fn func(o *store.Order) error, notes ...store.OutboxMessage) (store.Order, error)
}, now time.Time, o store.Order, note store.OutboxMessage) (store.Order, error) {
	return st.UpdateOrder(o.ID, func(o *store.Order) error {
		if o.Status != store.OrderActive {
			return ErrOrderState
		}
		o.Status = store.OrderTerminated
		o.Terminating = false
		o.Op = "" // a billing call still queued has nothing left to act on
		o.Record(now, "terminated", "")
		return nil
	}, note)
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// startReconciler spawns the reconciler; Start calls it once the outbox and feed run.
func (e *Engine) startReconciler() {
	st, ok := e.store.(ReconcileStore)
	if !ok {
		e.cfg.Logger.Warn("reconcile: the store cannot keep findings; the reconciler is off")
		return
	}
	e.actors.Spawn(newReconciler(reconcilerDeps{ctx: e.ctx, cfg: e.cfg, store: st, providers: e.cfg.Providers,
		metrics: newReconcileMetrics(e.cfg.Registry), feed: e.feed, outbox: e.outbox, scrub: newScrubber(e.cfg.Secrets.Mask...),
		passwords: e.passwords(), notes: e.notes()}),
		reconcilerKind, actor.WithID(reconcilerID))
}

func (e *Engine) reconcilerPID() *actor.PID {
	return e.actors.Registry.GetPID(reconcilerKind, reconcilerID)
}

// ErrNoReconciler is returned when the reconciler is not running (an ErrNotStarted).
var ErrNoReconciler = fmt.Errorf("%w: the reconciler is not running", ErrNotStarted)

// Reconcile runs a reconciliation now and returns its findings.
func (e *Engine) Reconcile(ctx context.Context) (ReconcileReport, error) {
	pid := e.reconcilerPID()
	if !e.started.Load() || pid == nil {
		return ReconcileReport{}, ErrNoReconciler
	}
	timeout := 5 * time.Minute
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	res, err := e.actors.Request(pid, reconcileNow{}, timeout).Result()
	if err != nil {
		return ReconcileReport{}, err
	}
	r := res.(reconcileResult)
	return r.report, r.err
}

// LastReconcile returns the last stored findings; ok is false before the first run.
func (e *Engine) LastReconcile() (rep ReconcileReport, ok bool, err error) {
	st, isRS := e.store.(ReconcileStore)
	if !isRS {
		return rep, false, ErrNoReconciler
	}
	b, err := st.ReconcileReport()
	if errors.Is(err, store.ErrNotFound) {
		return rep, false, nil
	}
	if err != nil {
		return rep, false, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, false, err
	}
	return rep, true, nil
}

// tellReconciler hands a refused termination to the reconciler for retries.
func tellReconciler(c *actor.Context, msg any) {
	if pid := c.Engine().Registry.GetPID(reconcilerKind, reconcilerID); pid != nil {
		c.Send(pid, msg)
	}
}
