package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pruneBackups takes every hangar-*.backup in the directory as one of its own and now
// deletes first any whose name sorts after now's stamp, as "written while the clock ran
// ahead". A name that is not a stamp at all sorts there too when it has a letter where
// the date's digits are: an operator's own `hangar backup DIR/hangar-pre-upgrade.backup`
// (the README shows backups named hangar-….backup, and --backup-dir is the obvious
// place for them) is taken for a backup from the future and is the first file deleted
// at the next scheduled run, before the oldest scheduled one. Before the change it
// sorted last and was kept.
func TestPruneBackupsKeepsAnOperatorsNamedBackup(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	var scheduled []string
	for i := range 7 {
		name := backupPrefix + now.Add(-time.Duration(7-i)*6*time.Hour).Format(backupStamp) + ".backup"
		scheduled = append(scheduled, name)
	}
	manual := "hangar-pre-upgrade.backup"
	written := backupPrefix + now.Format(backupStamp) + ".backup"
	for _, n := range append([]string{manual, written}, scheduled...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pruneBackups(dir, 7, written, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := os.Stat(filepath.Join(dir, manual)); err != nil {
		left, _ := os.ReadDir(dir)
		var names []string
		for _, n := range left {
			names = append(names, n.Name())
		}
		t.Errorf("the operator's %s was deleted as a backup from the future, while scheduled backups older than it were kept: %v", manual, names)
	}
}
