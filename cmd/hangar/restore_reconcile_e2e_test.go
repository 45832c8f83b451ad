package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// TestRestoreMovesOrderIDsPastProviderLabels: a backup is taken, more orders are placed
// (their servers carry hangar-order-<id> labels at the provider), and the data
// directory is lost. The daemon started from the restored backup must not hand a new
// order an id whose label the provider still holds, even before the operator thinks
// of running a reconcile (the periodic one is 10 minutes away).
// It failed before the restore marked its store for a reconcile at the next start:
// the first order after the restore was given id 2, whose label a server held.
func TestRestoreMovesOrderIDsPastProviderLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real daemons")
	}
	const token = "linode-restore-test-token"
	fake := linodefake.New(token)
	t.Cleanup(fake.Close)
	env := []string{"HANGAR_LINODE_TOKEN=" + token, "HANGAR_LINODE_API=" + fake.URL(),
		"HANGAR_ORDERS_PER_HOUR=1000", "HANGAR_POLL_INTERVAL=50ms", "HANGAR_RECONCILE_EVERY=10m"}
	order := func(d *daemon) int64 { return d.placeOrder(t, 77, "linode-nano", "ap-northeast") }

	dir := t.TempDir()
	d := startDaemon(t, dir, env...)
	d.deposit(t, 77, 1000000)
	if id := order(d); id != 1 {
		t.Fatalf("first order id %d", id)
	}
	// A clean stop writes the unused order ids back, so that the backup taken after the
	// restart holds the sequence at 2, not at the end of a lease of ids.
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("hangar serve after SIGTERM: %v\n%s", err, d.logs.String())
	}
	d = startDaemon(t, dir, env...)
	file := filepath.Join(t.TempDir(), "old.backup")
	addr := strings.TrimPrefix(d.URL, "http://")
	if out, err := hangarCmd([]string{"HANGAR_CONSOLE_ADDR=" + addr, "HANGAR_ADMIN_TOKEN=" + hangartest.AdminToken}, "backup", file); err != nil {
		t.Fatalf("hangar backup: %v\n%s", err, out)
	}
	var last int64
	for range 3 {
		last = order(d)
	}
	label := fmt.Sprintf("hangar-order-%d", last)
	if !fake.Wait(60*time.Second, func() bool {
		for _, in := range fake.Instances() {
			if in.Label == label {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the provider never got a server labelled %s", label)
	}
	d.kill() // the machine is lost

	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := hangarCmd(nil, "restore", "--data", restored, file); err != nil {
		t.Fatalf("hangar restore: %v\n%s", err, out)
	}
	r := startDaemon(t, restored, env...)
	if id := order(r); id <= last {
		t.Fatalf("the first order after the restore got id %d; the provider holds hangar-order-%d (labels in use: %v)\n%s",
			id, last, labels(fake), r.logs.String())
	}
	if !strings.Contains(r.logs.String(), restoreReconcileLine) {
		t.Errorf("the first start after the restore does not say it reconciles:\n%s", r.logs.String())
	}
	// The marker is cleared once the reconcile has run: the next start does not run it again.
	r.kill()
	r = startDaemon(t, restored, env...)
	if strings.Contains(r.logs.String(), restoreReconcileLine) {
		t.Errorf("a second start after the restore reconciles again:\n%s", r.logs.String())
	}
}

func labels(f *linodefake.Server) []string {
	var out []string
	for _, in := range f.Instances() {
		out = append(out, in.Label)
	}
	return out
}
