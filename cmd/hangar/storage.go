package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/store"
)

// storageConfig is how hangar guards its disk: the free-space floor and scheduled
// backups.
type storageConfig struct {
	MinFree     int
	BackupDir   string
	BackupEvery time.Duration
	BackupKeep  int
}

func addStorageFlags(f *envFlags, c *storageConfig) {
	f.Size(&c.MinFree, "min-free-disk", "HANGAR_MIN_FREE_DISK", "512MiB", "free space the data directory's filesystem must keep: below it writes get 507 insufficient_storage (reads go on) until space is freed; 0 turns the check off")
	f.String(&c.BackupDir, "backup-dir", "HANGAR_BACKUP_DIR", "", "directory for scheduled backups (empty: none); put it on another disk")
	f.Duration(&c.BackupEvery, "backup-every", "HANGAR_BACKUP_EVERY", 6*time.Hour, "how often to write a scheduled backup into --backup-dir")
	f.Int(&c.BackupKeep, "backup-keep", "HANGAR_BACKUP_KEEP", 7, "scheduled backups to keep; older ones are deleted")
}

func (c storageConfig) validate() error {
	var errs []error
	if c.MinFree < 0 {
		errs = append(errs, errors.New("--min-free-disk must not be negative"))
	}
	if c.BackupDir != "" && c.BackupEvery < time.Minute {
		errs = append(errs, errors.New("--backup-every must be at least 1m"))
	}
	if c.BackupKeep < 1 {
		errs = append(errs, errors.New("--backup-keep must be at least 1"))
	}
	return errors.Join(errs...)
}

// backupPrefix names scheduled backups so that they sort by time.
const (
	backupPrefix = "hangar-"
	backupStamp  = "20060102-150405" // UTC: the names sort as the times
)

// scheduleBackups writes a backup into cfg.BackupDir every cfg.BackupEvery until ctx
// ends, keeping the newest cfg.BackupKeep.
func scheduleBackups(ctx context.Context, st *store.Store, cfg storageConfig, log *slog.Logger) {
	if cfg.BackupDir == "" {
		return
	}
	removeLeftPartials(cfg.BackupDir, log)
	t := time.NewTicker(cfg.BackupEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		path, info, err := writeBackupFile(ctx, st, cfg.BackupDir)
		if err != nil {
			log.Error("scheduled backup failed", "dir", cfg.BackupDir, "err", err)
			continue
		}
		log.Info("scheduled backup written", "file", path, "keys", info.Keys, "took", time.Since(start).Round(time.Millisecond))
		pruneBackups(cfg.BackupDir, cfg.BackupKeep, filepath.Base(path), log)
	}
}

// writeBackupFile writes a backup into dir under a new name, durably: a temporary file,
// synced, then renamed.
func writeBackupFile(ctx context.Context, st *store.Store, dir string) (string, store.BackupInfo, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", store.BackupInfo{}, err
	}
	path := filepath.Join(dir, backupPrefix+time.Now().UTC().Format(backupStamp)+".backup")
	f, err := os.CreateTemp(dir, partialPrefix+"*")
	if err != nil {
		return "", store.BackupInfo{}, err
	}
	defer os.Remove(f.Name())
	// Held while it is written: removeLeftPartials deletes only the ones no process holds.
	_ = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	info, err := st.Backup(ctx, &floorWriter{w: f, room: func(n int64) error { return st.SpaceFor(dir, n) }})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return path, info, err
}

// partialPrefix begins the name of a scheduled backup being written.
const partialPrefix = ".partial-"

// removeLeftPartials deletes the temporary files of scheduled backups that a crash cut
// off (each as large as a backup; pruning looks only at finished ones). One still
// being written, by another daemon sharing the directory, is locked and stays.
func removeLeftPartials(dir string, log *slog.Logger) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if !strings.HasPrefix(n.Name(), partialPrefix) || !n.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, n.Name())
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			if err := os.Remove(path); err != nil {
				log.Warn("cannot delete what a cut-off backup left", "file", path, "err", err)
			} else {
				log.Info("deleted what a cut-off backup left", "file", path)
			}
		}
		f.Close()
	}
}

// floorWriter asks room before each backupSpaceStep bytes it passes on: a backup
// written on the data directory's disk stops before it takes the disk below the
// free-space floor (the store's writes would be refused, and Badger's mapped files
// need the room).
type floorWriter struct {
	w      io.Writer
	room   func(n int64) error
	budget int64
}

const backupSpaceStep = 1 << 20

func (f *floorWriter) Write(p []byte) (int, error) {
	if n := int64(len(p)); n > f.budget {
		step := max(n, backupSpaceStep)
		if err := f.room(step); err != nil {
			return 0, err
		}
		f.budget = step
	}
	f.budget -= int64(len(p))
	return f.w.Write(p)
}

// pruneBackups keeps the newest keep backups, oldest by name going first, and never
// the one just written: names are the wall clock's, and after the clock was stepped
// back every new backup sorted before those written while it ran ahead, so each one
// was deleted as soon as it was written.
// isScheduledBackup says name is one scheduleBackups writes (hangar-YYYYMMDD-HHMMSS.backup):
// anything else in the directory, an operator's hangar-pre-upgrade.backup among them,
// is never pruned.
func isScheduledBackup(name string) bool {
	stamp, ok := strings.CutPrefix(name, backupPrefix)
	if !ok {
		return false
	}
	if stamp, ok = strings.CutSuffix(stamp, ".backup"); !ok {
		return false
	}
	_, err := time.Parse(backupStamp, stamp)
	return err == nil
}

func pruneBackups(dir string, keep int, written string, log *slog.Logger) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var backups []string
	for _, n := range names {
		if isScheduledBackup(n.Name()) && n.Name() != written {
			backups = append(backups, n.Name())
		}
	}
	// Oldest first by name, except that a name later than now was written while the
	// clock ran ahead, before every backup named by the clock since: those go first.
	future := backupPrefix + time.Now().UTC().Add(time.Minute).Format(backupStamp)
	slices.SortFunc(backups, func(a, b string) int {
		if af, bf := a > future, b > future; af != bf {
			if af {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for len(backups) > max(keep-1, 0) {
		if err := os.Remove(filepath.Join(dir, backups[0])); err != nil {
			log.Warn("cannot delete an old backup", "file", backups[0], "err", err)
		}
		backups = backups[1:]
	}
}

// runBackup is `hangar backup FILE`: a consistent snapshot of a running daemon, read
// through the admin API while it keeps serving.
func runBackup(args []string) error {
	fs, c := adminFlags("backup")
	fs.SetOutput(os.Stdout)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar backup FILE [--addr URL]\n\n"+
			"Writes a consistent snapshot of a running daemon to FILE (- for stdout), through\n"+
			"GET /admin/backup, while it keeps serving. It holds every write acknowledged before\n"+
			"it began. Restore it with `hangar restore --data DIR FILE`.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("give one FILE (or - for stdout)")
	}
	if c.token == "" {
		return errors.New("no admin token: set HANGAR_ADMIN_TOKEN or --token")
	}
	target := fs.Arg(0)
	req, err := http.NewRequest(http.MethodGet, c.url("/admin/backup"), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	client := &http.Client{} // a backup takes as long as it takes
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("daemon unreachable at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("GET /admin/backup: %d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	// The daemon answers 200 before it has read anything, so a failure after that ends
	// the stream early: the stream is checked as restore would check it while it is
	// saved, and a broken one is not kept (nor reported as a backup).
	if target == "-" {
		if _, err := store.VerifyBackup(io.TeeReader(resp.Body, os.Stdout)); err != nil {
			return fmt.Errorf("the backup stream is not whole (do not restore what was written): %w", err)
		}
		return nil
	}
	// A new file, owner-only: one left at tmp (by a backup cut off, or anything else)
	// is replaced, not written into with its own permissions or followed as a link.
	tmp := target + ".partial"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cw := &countingWriter{w: f}
	_, err = store.VerifyBackup(io.TeeReader(resp.Body, cw))
	n := cw.n
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("backup cut off after %d bytes: %w", n, err)
	}
	fmt.Fprintf(os.Stderr, "hangar: backup written to %s (%d bytes)\n", target, n)
	return nil
}

// runRestore is `hangar restore --data DIR FILE`.
func runRestore(args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	var dir string
	fs.StringVar(&dir, "data", "", "data directory to restore into; it must be empty or not exist")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar restore --data DIR FILE\n\n"+
			"Restores a backup written by `hangar backup` (FILE, or - for stdin) into an empty\n"+
			"data directory, then `hangar serve --data DIR` starts from it. A damaged or cut-short\n"+
			"backup is refused whole. The SSH host key and authorized_keys are not in a backup:\n"+
			"copy them yourself, or a new host key is generated.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	if dir == "" || fs.NArg() != 1 {
		fs.Usage()
		return errors.New("give --data DIR and one FILE")
	}
	var r io.Reader = os.Stdin
	if src := fs.Arg(0); src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	if names, err := os.ReadDir(dir); err == nil {
		// A restore killed part-way left its half-built store beside db; this one
		// starts over.
		names = slices.DeleteFunc(names, func(e os.DirEntry) bool { return e.Name() == filepath.Base(storeDir(dir))+".restoring" })
		if len(names) > 0 {
			return fmt.Errorf("%s is not empty (%d entries): restore only into a new or empty directory, so nothing is mixed with what is there", dir, len(names))
		}
	}
	info, err := store.RestoreBackup(storeDir(dir), r, time.Now())
	if err != nil {
		return err
	}
	fmt.Printf("restored %d keys into %s; start it with: hangar serve --data %s\n"+
		"(its first start reconciles with the providers before it takes orders)\n", info.Keys, dir, dir)
	return nil
}

// restoreReconcileLine is what the first start after a restore logs before it
// reconciles.
const restoreReconcileLine = "a restored store: reconciling before taking orders"

// reconcileAfterRestore runs a reconcile before the first start after a restore takes
// orders. The backup does not know the orders placed after it: their servers keep
// hangar-order-<id> labels at the providers, and the restored order sequence would
// hand those ids out again (a Linode label is unique: such an order could never have
// a server). The reconcile moves new order ids past every such label. Until it has
// listed every provider the store stays marked, and every start tries again.
func reconcileAfterRestore(ctx context.Context, st *store.Store, rec interface {
	Reconcile(context.Context) (engine.ReconcileReport, error)
}, log *slog.Logger) {
	at, restored, err := st.RestoredAt()
	if err != nil {
		log.Error("cannot read whether this store was restored; run a reconcile (POST /admin/reconcile) before orders come in", "err", err)
		return
	}
	if !restored {
		return
	}
	log.Warn(restoreReconcileLine, "restored_at", at)
	rep, err := rec.Reconcile(ctx)
	if err == nil && len(rep.Errors) > 0 {
		err = errors.New(strings.Join(rep.Errors, "; "))
	}
	if err != nil {
		log.Error("the reconcile after the restore did not finish: new orders may be given ids whose hangar-order labels a provider still holds; "+
			"run POST /admin/reconcile (the console's r) once every provider answers. The next start tries again", "err", err)
		return
	}
	if err := st.ClearRestored(); err != nil {
		log.Warn("the reconcile after the restore ran, but its marker stays: the next start runs it again", "err", err)
		return
	}
	log.Info("reconciled after the restore", "providers", rep.Providers, "servers", rep.Servers, "orphans", len(rep.Orphans))
}

// runRepair is `hangar repair --data DIR`.
func runRepair(args []string) error {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	var dir string
	fs.StringVar(&dir, "data", "", "data directory of a stopped hangar whose start refused a damaged write-ahead log")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar repair --data DIR\n\n"+
			"Run only with hangar stopped, after `hangar serve` refused to start on a damaged\n"+
			"write-ahead log. It keeps a copy of every segment it changes, cuts the log where the\n"+
			"damage starts, and reports what was lost. Never run automatically.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	if dir == "" {
		fs.Usage()
		return errors.New("give --data DIR")
	}
	if _, err := os.Stat(storeDir(dir)); err != nil {
		return fmt.Errorf("no hangar store in %s: %w", dir, err)
	}
	_, err := store.Repair(storeDir(dir), os.Stdout)
	return err
}

// storeDir is where a data directory keeps the store.
func storeDir(dataDir string) string { return filepath.Join(dataDir, "db") }

// url is the admin API address of path; addr may be host:port or a URL.
func (c *adminClient) url(path string) string {
	addr := c.addr
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return strings.TrimRight(addr, "/") + path
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
