package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// store/meta.go was changed so that a start with the disk below the free-space floor
// opens the store read-only instead of failing. The vault change in the same set
// writes meta:vault_since at start whenever password.key is present and the store
// holds no time yet — which is the first start of every upgraded install that still
// has password.key (the README tells operators to keep it while old orders are in
// flight). If that start happens with the disk below the floor, the write is refused
// and `hangar serve` exits ("vault: store: not enough free disk space"), reads and
// all, until an operator frees space: the outage the meta.go fix removed, back.
func TestVaultSinceWriteFailsAStartBelowTheFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real daemon")
	}
	dir := t.TempDir()
	// A first run (a version that never wrote vault_since is the same to the store:
	// no meta:vault_since) takes a deposit and stops cleanly.
	d := startDaemon(t, dir)
	if code, err := depositStatus(d.URL, 1); err != nil || code != 200 {
		t.Fatalf("deposit: %d %v", code, err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	// The old derivation key an upgraded install still has.
	if err := os.WriteFile(filepath.Join(dir, "password.key"), make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}

	// The disk is below the floor at the next start (a floor above any disk's size
	// stands in for a full disk).
	d = launchDaemon(t, dir, "HANGAR_MIN_FREE_DISK=1000000GiB")
	exited := d.exits(t)
	d.servesReads(t, exited)
}
