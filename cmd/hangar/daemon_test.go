package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// hangarBin is the real binary, built once (with -race) for the subprocess tests.
var hangarBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hangar-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hangarBin = filepath.Join(dir, "hangar")
	build := exec.Command("go", "build", "-race", "-o", hangarBin, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building hangar:", err)
		os.Exit(1)
	}
	// A binary built with -race sleeps a second at exit (the race runtime's
	// atexit_sleep_ms): a second for every command these tests run, a quarter of the
	// package's time. Race reports are unaffected.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// daemon is a running `hangar serve` subprocess.
type daemon struct {
	cmd  *exec.Cmd
	URL  string
	logs *hangartest.SyncBuffer
}

func freeAddr(t *testing.T) string {
	t.Helper()
	// The port is free once closed, so the kernel may hand it out again: a daemon's HTTP
	// and SSH addresses once came out the same. None is given twice in a run.
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}

var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// startDaemon runs hangar serve on dataDir with extra environment and waits for /health.
func startDaemon(t *testing.T, dataDir string, env ...string) *daemon {
	t.Helper()
	d := launchDaemon(t, dataDir, env...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return d
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("hangar did not become healthy: %v\n%s", err, d.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// launchDaemon starts `hangar serve` on dataDir as startDaemon does, without waiting
// for /health (below the disk floor the public /health answers 503 by design).
func launchDaemon(t *testing.T, dataDir string, env ...string) *daemon {
	t.Helper()
	addr := freeAddr(t)
	d := &daemon{URL: "http://" + addr, logs: &hangartest.SyncBuffer{}}
	d.cmd = exec.Command(hangarBin, "serve")
	d.cmd.Env = append(os.Environ(),
		"HANGAR_DATA_DIR="+dataDir,
		"HANGAR_HTTP_ADDR="+addr,
		"HANGAR_SSH_ADDR="+freeAddr(t),
		"HANGAR_WEBHOOK_SECRET="+hangartest.WebhookSecret,
		"HANGAR_ADMIN_TOKEN="+hangartest.AdminToken,
		"HANGAR_LOG_LEVEL=debug",
		// The tests written before the bot spoke Korean read its English; a test that
		// wants the default passes HANGAR_LANGUAGE=ko, which comes later and wins.
		"HANGAR_LANGUAGE=en",
		// The default floor (512MiB) would refuse every write on a nearly full test disk.
		"HANGAR_MIN_FREE_DISK=16MiB",
	)
	d.cmd.Env = append(d.cmd.Env, env...)
	d.cmd.Stdout, d.cmd.Stderr = d.logs, d.logs
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.kill() })
	return d
}

// servesReads waits until d answers an admin read, failing if the process exits
// first (exited is d.exits's).
func (d *daemon) servesReads(t *testing.T, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("hangar serve exited (%v) instead of serving reads:\n%s", err, d.logs.String())
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, d.URL+"/admin/users/1", nil)
		req.Header.Set("Authorization", "Bearer "+hangartest.AdminToken)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("hangar did not serve reads within 30s\n%s", d.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// smallTmpfs mounts a 160 MiB tmpfs for the test (root only; skipped otherwise), so
// that a test can fill a real filesystem.
func smallTmpfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs; skipped")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); skipped", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// exits waits for the process in the background and answers how it exited. The one
// Wait is made there; a cleanup, run before the kill's, ends and reaps the process,
// so that the kill finds it done rather than waiting for it a second time.
func (d *daemon) exits(t *testing.T) <-chan error {
	exited, reaped := make(chan error, 1), make(chan struct{})
	go func() { exited <- d.cmd.Wait(); close(reaped) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-reaped
	})
	return exited
}

// kill ends the process with SIGKILL: no shutdown hooks, no flush.
func (d *daemon) kill() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	_ = d.cmd.Wait()
}
