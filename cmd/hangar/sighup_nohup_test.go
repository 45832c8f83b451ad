package main

import (
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// `nohup hangar serve &` (or any supervisor that starts it with SIGHUP ignored) is the
// classic way to keep a process through a logout: the hangup is ignored, and an ignored
// disposition is inherited across exec. os/signal documents that Notify for SIGHUP
// installs a handler "and it will no longer be ignored": since serve now asks for
// SIGHUP, closing the terminal of a nohup'd daemon stops it. It ran on before.
func TestSIGHUPIgnoredAtStartStaysIgnored(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real daemon")
	}
	addr := freeAddr(t)
	d := &daemon{URL: "http://" + addr, logs: &hangartest.SyncBuffer{}}
	// As nohup does: SIGHUP ignored, then exec.
	d.cmd = exec.Command("sh", "-c", `trap "" HUP; exec "$0" serve`, hangarBin)
	d.cmd.Env = append(os.Environ(),
		"HANGAR_DATA_DIR="+t.TempDir(),
		"HANGAR_HTTP_ADDR="+addr,
		"HANGAR_SSH_ADDR=off",
		"HANGAR_WEBHOOK_SECRET="+hangartest.WebhookSecret,
		"HANGAR_ADMIN_TOKEN="+hangartest.AdminToken,
		"HANGAR_MIN_FREE_DISK=16MiB",
	)
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.kill() })
	healthy := func() bool {
		resp, err := http.Get(d.URL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	hangartest.WaitFor(t, 30*time.Second, "hangar healthy", healthy)

	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil { // the terminal closes
		t.Fatal(err)
	}
	exited := d.exits(t)
	select {
	case err := <-exited:
		t.Fatalf("a daemon started with SIGHUP ignored (nohup) stopped at SIGHUP (%v):\n%s", err, d.logs.String())
	case <-time.After(3 * time.Second):
	}
	if !healthy() {
		t.Fatalf("after SIGHUP the nohup'd daemon no longer answers /health:\n%s", d.logs.String())
	}
}
