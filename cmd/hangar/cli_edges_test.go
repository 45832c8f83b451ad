package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// The README: below the free-space floor "every write answers 507 ... reads, the
// console and /health keep working", and "once space is freed, writes are taken again
// within a second, without a restart". A daemon that restarts while the disk is below
// the floor (a crash, kill -9, systemd's Restart=on-failure, an upgrade, a reboot) must
// therefore come up serving reads and refusing writes, then take writes once space is
// back. It did not: `hangar serve` exited 1 at start with "not enough free disk space"
// (the schema migration wrote the schema version on every start, even with nothing to
// migrate), so the whole API, reads included, was down until an operator freed space.
func TestServeStartsReadOnlyWithTheDiskBelowTheFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real daemon")
	}
	mnt := smallTmpfs(t)
	dir := filepath.Join(mnt, "data")
	env := []string{"HANGAR_MIN_FREE_DISK=64MiB"}

	// A first run takes a deposit and stops cleanly.
	d := startDaemon(t, dir, env...)
	if code, err := depositStatus(d.URL, 1); err != nil || code != 200 {
		t.Fatalf("deposit before the disk filled: %d %v", code, err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()

	// Something else fills the disk below the floor while hangar is down.
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	ballast := filepath.Join(mnt, "ballast")
	free := int64(st.Bavail) * int64(st.Bsize)
	if err := os.WriteFile(ballast, make([]byte, free-40<<20), 0o600); err != nil {
		t.Fatalf("ballast: %v", err)
	}

	d = launchDaemon(t, dir, env...)
	exited := d.exits(t)
	d.servesReads(t, exited)
	if available, _ := userMoney(t, d.URL, 1); available != 1 {
		t.Fatalf("balance read while full: %d, want 1", available)
	}
	if code, err := depositStatus(d.URL, 1); err != nil || code != 507 {
		t.Fatalf("a write while below the floor: %d %v, want 507", code, err)
	}
	// Space comes back: writes are taken again without a restart.
	os.Remove(ballast)
	hangartest.WaitFor(t, 10*time.Second, "writes taken again once space is freed", func() bool {
		code, err := depositStatus(d.URL, 1)
		return err == nil && code == 200
	})
}

// `hangar serve` stops reading flags at the first argument that is not one (Go's flag
// package), and never checks that nothing is left over. `hangar serve ./data --data
// /srv/hangar --http 0.0.0.0:80 --ssh ""` (a stray word: a path, a subcommand typed
// twice, an unquoted value) is accepted without a word, and every flag after the word
// is dropped: the daemon runs on ./data, 127.0.0.1:8080 and the SSH console on 2222.
func TestServeRefusesArgumentsItDoesNotRead(t *testing.T) {
	clearHangarEnv(t)
	c, err := parseServeFlagsTo([]string{"./data", "--data", "/srv/hangar", "--http", "127.0.0.1:1", "--ssh", ""}, io.Discard)
	if err == nil {
		t.Fatalf("hangar serve took a stray argument without an error and dropped the flags after it: data %q, http %q, ssh %q",
			c.DataDir, c.HTTPAddr, c.SSHAddr)
	}
}

// The same through the real binary, where it does harm: `hangar dlq purge --addr B`
// (the address after the action, as people type it) is sent to the default or
// HANGAR_CONSOLE_ADDR daemon A, and purges A's dead letters. The flags after the
// action are not parsed at all.
func TestDLQActionFlagsAfterTheActionAreNotIgnored(t *testing.T) {
	var mu sync.Mutex
	hits := map[string][]string{}
	fake := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[name] = append(hits[name], r.Method+" "+r.URL.Path)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"purged":3}`)
		}))
	}
	a, b := fake("A"), fake("B")
	defer a.Close()
	defer b.Close()
	cmd := exec.Command(hangarBin, "dlq", "purge", "--addr", b.URL)
	cmd.Env = append(os.Environ(), "HANGAR_CONSOLE_ADDR="+a.URL, "HANGAR_ADMIN_TOKEN="+hangartest.AdminToken)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	mu.Lock()
	defer mu.Unlock()
	if len(hits["A"]) > 0 {
		t.Fatalf("`hangar dlq purge --addr B` purged daemon A (HANGAR_CONSOLE_ADDR): A got %v, B got %v; exit %v, output %q",
			hits["A"], hits["B"], err, out.String())
	}
	if err == nil && len(hits["B"]) == 0 {
		t.Fatalf("`hangar dlq purge --addr B` reached neither daemon and exited 0: %q", out.String())
	}
}

// A terminal's hangup stops the daemon gracefully, as SIGTERM does: it exits 0 having
// said it shut down, rather than dying at the signal's default action.
func TestSIGHUPStopsGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real daemon")
	}
	d := startDaemon(t, t.TempDir())
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	done := d.exits(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after SIGHUP the daemon exited with %v; it said:\n%s", err, d.logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the daemon did not stop within 15 s of SIGHUP:\n%s", d.logs.String())
	}
}
