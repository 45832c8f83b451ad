package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/tui/client"
)

// TestLogPaneReadsTheDaemonsLog: hangar serve keeps its own log lines for the console
// (GET /admin/logs), its start line among them, and no configured secret in any.
func TestLogPaneReadsTheDaemonsLog(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	c, err := client.New(d.URL, hangartest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	page, err := c.Logs(ctx, 0, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var serving bool
	for _, r := range page.Records {
		line := r.Msg + " " + r.Attrs
		serving = serving || r.Msg == "hangar serving"
		for _, secret := range []string{hangartest.AdminToken, hangartest.WebhookSecret} {
			if strings.Contains(line, secret) {
				t.Fatalf("a kept log line holds a secret: %q", line)
			}
		}
	}
	if !serving || page.Last < uint64(len(page.Records)) {
		t.Fatalf("no start line among %d records (last %d):\n%+v", len(page.Records), page.Last, page.Records)
	}
	warn, err := c.Logs(ctx, 0, "warn", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range warn.Records {
		if r.Level != "WARN" && r.Level != "ERROR" {
			t.Fatalf("level warn answered a %s line", r.Level)
		}
	}
}

// TestConsoleRunsTheReconciler: the console's client reads the engine's report as
// the reconciler view shows it, before and after a run it asks for.
func TestConsoleRunsTheReconciler(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	c, err := client.New(d.URL, hangartest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	ran, err := c.RunReconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran.At.IsZero() || len(ran.Providers) == 0 || ran.Duplicates == nil || ran.Orphans == nil {
		t.Fatalf("run answered %+v: want its time, the providers listed and empty lists, not nulls", ran)
	}
	last, err := c.Reconcile(ctx)
	if err != nil || !last.At.Equal(ran.At) || last.Servers != ran.Servers {
		t.Fatalf("last report = %+v, %v; the run answered %+v", last, err, ran)
	}
}
