package fakedaemon

import (
	"context"
	"fmt"
	"time"

	"github.com/hangarhq/hangar/http/api"
)

func seedAudit(d *Daemon) {
	d.Who = api.Whoami{Role: "operator", Actor: "admin token"}
	d.AuditLog = []api.AuditEntry{
		{ID: 6, At: Now.Add(-20 * time.Second), Actor: "ssh SHA256:q8Zc0Kx3Vb alice@laptop", Role: "operator", Method: "POST",
			Route: "/admin/queue/resume", Path: "/admin/queue/resume", Status: 200},
		{ID: 5, At: Now.Add(-2 * time.Minute), Actor: "viewer token", Role: "viewer", Method: "DELETE",
			Route: "/admin/dlq", Path: "/admin/dlq", Status: 403, Code: "read_only"},
		{ID: 4, At: Now.Add(-5 * time.Minute), Actor: "admin token", Role: "operator", Method: "POST",
			Route: "/admin/users/:id/deposit", Path: "/admin/users/7000012341/deposit", Detail: "amount=50000", Status: 200},
		{ID: 3, At: Now.Add(-9 * time.Minute), Actor: "ssh SHA256:q8Zc0Kx3Vb alice@laptop", Role: "operator", Method: "POST",
			Route: "/admin/orders/:id/cancel", Path: "/admin/orders/31/cancel", Status: 409, Code: "conflict"},
		{ID: 2, At: Now.Add(-14 * time.Minute), Actor: "ssh SHA256:q8Zc0Kx3Vb alice@laptop", Role: "operator", Method: "POST",
			Route: "/admin/queue/pause", Path: "/admin/queue/pause", Status: 200},
		{ID: 1, At: Now.Add(-3 * time.Hour), Actor: "admin token (console: bob@desk)", Role: "operator", Method: "DELETE",
			Route: "/api/admin/comments/:id", Path: "/api/admin/comments/12", Status: 200},
	}
}

// SetWho makes Whoami answer role and actor, as the daemon would for a viewer token.
func (d *Daemon) SetWho(role, actor string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Who = api.Whoami{Role: role, Actor: actor}
}

func (d *Daemon) Whoami(ctx context.Context) (api.Whoami, error) {
	return answer(d, func() api.Whoami { return d.Who }, "Whoami")
}

func (d *Daemon) PauseQueue(ctx context.Context) (api.QueuePause, error) {
	return answer(d, func() api.QueuePause { return d.setPaused(true) }, "PauseQueue")
}

func (d *Daemon) ResumeQueue(ctx context.Context) (api.QueuePause, error) {
	return answer(d, func() api.QueuePause { return d.setPaused(false) }, "ResumeQueue")
}

// setPaused changes the fake's queue as the daemon would; called under the lock.
func (d *Daemon) setPaused(paused bool) api.QueuePause {
	if d.Stats.Paused == paused {
		var since time.Time
		if d.Stats.PausedSince != nil {
			since = *d.Stats.PausedSince
		}
		return api.QueuePause{Paused: paused, Since: since}
	}
	// A later snapshot, as the daemon's next one would be: the console keeps the newest.
	d.Stats.At = d.Stats.At.Add(time.Second)
	now := Now
	d.Stats.Paused, d.Stats.PausedSince = paused, nil
	if paused {
		d.Stats.PausedSince = &now
	}
	return api.QueuePause{Paused: paused, Since: now, Changed: true}
}

// SetPaused shows the queue paused since when (or running), as an event would.
func (d *Daemon) SetPaused(paused bool, since time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Stats.Paused, d.Stats.PausedSince = paused, nil
	if paused {
		d.Stats.PausedSince = &since
	}
}

func (d *Daemon) Audit(ctx context.Context, limit int, before uint64) (api.AuditPage, error) {
	return answer(d, func() api.AuditPage {
		var out []api.AuditEntry
		for _, e := range d.AuditLog {
			if before == 0 || e.ID < before {
				out = append(out, e)
			}
		}
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return api.AuditPage{Entries: out}
	}, "%s", fmt.Sprintf("Audit %d", limit))
}
