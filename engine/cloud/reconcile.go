package cloud

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/linode/linodego"
	"github.com/vultr/govultr/v3"
)

// Lister lists every instance whose label starts with prefix, oldest first: what the
// reconciler and a recovered order need to see duplicates a single FindByLabel hides.
type Lister interface {
	List(ctx context.Context, prefix string) ([]Instance, error)
}

// DefaultSettle is how long Linode and Vultr get to finish a create whose caller went
// away (a crash or a stop) before hangar looks for its server by label: a create
// there is accepted in seconds, but a server can take longer to be listable.
const DefaultSettle = 90 * time.Second

var (
	_ Lister = (*Linode)(nil)
	_ Lister = (*Vultr)(nil)
	_ Lister = (*Sim)(nil)
)

// SetSettle changes how long a create may still be finishing after its caller went away.
func (l *Linode) SetSettle(d time.Duration) { l.settle = d }

// Settle is how long a create may still be finishing after its caller went away.
func (l *Linode) Settle() time.Duration { return settleOr(l.settle) }

// SetSettle changes how long a create may still be finishing after its caller went away.
func (v *Vultr) SetSettle(d time.Duration) { v.settle = d }

// Settle is how long a create may still be finishing after its caller went away.
func (v *Vultr) Settle() time.Duration { return settleOr(v.settle) }

// Settle is the simulator's longest create: after it, every create has finished.
func (s *Sim) Settle() time.Duration { return s.max }

func settleOr(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultSettle
}

// List reads every instance of the account (linodego walks the pages) and keeps those
// whose label starts with prefix.
func (l *Linode) List(ctx context.Context, prefix string) ([]Instance, error) {
	cctx, x := withExchange(ctx)
	list, err := l.client.ListInstances(cctx, linodego.NewListOptions(0, ""))
	if err != nil {
		return nil, classify(ctx, l.Name(), "list", x, err, l.red)
	}
	var out []Instance
	for i := range list {
		if strings.HasPrefix(list[i].Label, prefix) {
			out = append(out, linodeInstance(&list[i]))
		}
	}
	return oldestFirst(out), nil
}

// List walks Vultr's pages and keeps the instances whose label starts with prefix.
func (v *Vultr) List(ctx context.Context, prefix string) ([]Instance, error) {
	cctx, x := withExchange(ctx)
	opts := &govultr.ListOptions{PerPage: 100}
	var out []Instance
	for {
		list, meta, _, err := v.client.Instance.List(cctx, opts)
		if err != nil {
			return nil, classify(ctx, v.Name(), "list", x, err, v.red)
		}
		for i := range list {
			if strings.HasPrefix(list[i].Label, prefix) {
				out = append(out, vultrInstance(&list[i]))
			}
		}
		if meta == nil || meta.Links == nil || meta.Links.Next == "" {
			return oldestFirst(out), nil
		}
		opts.Cursor = meta.Links.Next
	}
}

// List returns the simulated instances whose label starts with prefix.
func (s *Sim) List(ctx context.Context, prefix string) ([]Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, s.interrupted("list", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Instance
	for label, in := range s.byLabel {
		if strings.HasPrefix(label, prefix) {
			out = append(out, in)
		}
	}
	return oldestFirst(out), nil
}

// oldestFirst sorts by creation time, then id; instances without a time go last.
func oldestFirst(in []Instance) []Instance {
	sort.SliceStable(in, func(i, j int) bool {
		a, b := in[i], in[j]
		switch {
		case a.Created.IsZero() != b.Created.IsZero():
			return !a.Created.IsZero()
		case !a.Created.Equal(b.Created):
			return a.Created.Before(b.Created)
		}
		return a.ID < b.ID
	})
	return in
}

// Keeper picks, among several servers of one order, the one to keep: the one the
// order already records (id), else a running one, else the oldest. The list must be
// oldest first.
func Keeper(servers []Instance, id string) int {
	for i, in := range servers {
		if id != "" && in.ID == id {
			return i
		}
	}
	for i, in := range servers {
		if in.Ready() {
			return i
		}
	}
	return 0
}
