package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// `hangar backup FILE` keeps the backup (every record, sealed secrets and password
// hashes among them) readable by its owner only, whatever was at FILE.partial before:
// it wrote into an existing FILE.partial as it found it, a world-readable one left by
// a copy or another tool made a world-readable backup.
func TestBackupFileIsOwnerOnlyWhateverWasThere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real daemon")
	}
	d := startDaemon(t, t.TempDir())
	dir := t.TempDir()
	file := filepath.Join(dir, "snap.backup")
	if err := os.WriteFile(file+".partial", []byte("left over"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(file+".partial", 0o644) // past the umask
	env := []string{"HANGAR_CONSOLE_ADDR=" + strings.TrimPrefix(d.URL, "http://"), "HANGAR_ADMIN_TOKEN=" + hangartest.AdminToken}
	if out, err := hangarCmd(env, "backup", file); err != nil {
		t.Fatalf("hangar backup: %v\n%s", err, out)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("the backup is %v: others can read it", perm)
	}
}
