package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// deposit credits user with 1 through the admin API and returns the status.
func depositStatus(url string, user int64) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/admin/users/%d/deposit", url, user), strings.NewReader(`{"amount":1}`))
	req.Header.Set("Authorization", "Bearer "+hangartest.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// userMoney reads a user's balance and the sum of their ledger.
func userMoney(t *testing.T, url string, user int64) (available, ledgerSum int64) {
	t.Helper()
	r := hangartest.Do(t, http.MethodGet, fmt.Sprintf("%s/admin/users/%d", url, user), nil, "Authorization", "Bearer "+hangartest.AdminToken)
	if r.Status != 200 {
		t.Fatalf("GET user %d: %d %s", user, r.Status, r.Body)
	}
	var out struct {
		Balance struct{ Available int64 } `json:"balance"`
		Ledger  []struct{ Amount int64 }  `json:"ledger"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	for _, e := range out.Ledger {
		ledgerSum += e.Amount
	}
	return out.Balance.Available, ledgerSum
}

// hangarCmd runs the hangar binary with args and extra environment.
func hangarCmd(env []string, args ...string) (string, error) {
	cmd := exec.Command(hangarBin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// `hangar backup` of a daemon under deposit load, then `hangar restore` into a new
// directory: the daemon started from it holds every deposit acknowledged before the
// backup began, and every balance equals its ledger.
func TestBackupOfARunningDaemonRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real daemons")
	}
	d := startDaemon(t, t.TempDir())
	const users = 10
	var (
		stop   atomic.Bool
		begun  atomic.Bool
		mu     sync.Mutex
		before = map[int64]int64{}
		wg     sync.WaitGroup
		acked  atomic.Int64
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				user := int64((w+i)%users + 1)
				started := begun.Load()
				if code, err := depositStatus(d.URL, user); err != nil || code != 200 {
					t.Errorf("deposit: %d %v", code, err)
					return
				}
				acked.Add(1)
				if !started && !begun.Load() {
					mu.Lock()
					before[user]++
					mu.Unlock()
				}
			}
		})
	}
	for acked.Load() < 300 {
		time.Sleep(5 * time.Millisecond)
	}
	begun.Store(true)
	file := filepath.Join(t.TempDir(), "snap.backup")
	addr := strings.TrimPrefix(d.URL, "http://") // host:port, no scheme
	if out, err := hangarCmd([]string{"HANGAR_CONSOLE_ADDR=" + addr, "HANGAR_ADMIN_TOKEN=" + hangartest.AdminToken}, "backup", file); err != nil {
		t.Fatalf("hangar backup: %v\n%s", err, out)
	}
	for n := acked.Load(); acked.Load() < n+100; {
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	d.kill()

	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := hangarCmd(nil, "restore", "--data", restored, file); err != nil {
		t.Fatalf("hangar restore: %v\n%s", err, out)
	}
	if out, err := hangarCmd(nil, "restore", "--data", restored, file); err == nil || !strings.Contains(out, "not empty") {
		t.Fatalf("a second restore into the same directory: %v\n%s", err, out)
	}
	r := startDaemon(t, restored)
	for user := int64(1); user <= users; user++ {
		available, sum := userMoney(t, r.URL, user)
		if available != sum {
			t.Fatalf("user %d restored: balance %d, ledger sums to %d", user, available, sum)
		}
		if available < before[user] {
			t.Fatalf("user %d restored with %d; %d deposits were acknowledged before the backup began", user, available, before[user])
		}
	}
}

// A damaged log stops `hangar serve` with the file, the offset and the way out;
// `hangar repair` cuts it and the daemon starts again.
func TestDamagedLogStopsServeUntilRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real daemons")
	}
	dir := t.TempDir()
	d := startDaemon(t, dir)
	for i := range 200 {
		if code, err := depositStatus(d.URL, int64(i%5+1)); err != nil || code != 200 {
			t.Fatalf("deposit: %d %v", code, err)
		}
	}
	d.kill()
	segs, _ := filepath.Glob(filepath.Join(storeDir(dir), "wal", "*.log"))
	if len(segs) == 0 {
		t.Fatal("no log segment after a SIGKILL")
	}
	last := segs[len(segs)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00"))
	b[end/3] ^= 0xff
	os.WriteFile(last, b, 0o600)

	out, err := hangarCmd([]string{"HANGAR_DATA_DIR=" + dir, "HANGAR_HTTP_ADDR=" + freeAddr(t), "HANGAR_SSH_ADDR="}, "serve")
	if err == nil || !strings.Contains(out, filepath.Base(last)) || !strings.Contains(out, "hangar repair --data") {
		t.Fatalf("serve on a damaged log: %v\n%s", err, out)
	}
	out, err = hangarCmd(nil, "repair", "--data", dir)
	if err != nil || !strings.Contains(out, "Damage:") || !strings.Contains(out, "damaged-") {
		t.Fatalf("hangar repair: %v\n%s", err, out)
	}
	t.Logf("repair said:\n%s", out)
	startDaemon(t, dir)
}

// On a small filesystem, a disk filled under load makes writes answer 507 (reads go
// on, one log line for the change, not one per request); once space is freed writes
// are taken again without a restart, and after a clean stop and a start every
// acknowledged deposit is there. Needs root to mount a tmpfs.
func TestFullDiskUnderLoadLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real daemon")
	}
	mnt := smallTmpfs(t)
	dir := filepath.Join(mnt, "data")
	env := []string{"HANGAR_MIN_FREE_DISK=64MiB"}
	d := startDaemon(t, dir, env...)

	const users = 20 // the admin API lists 1000 ledger entries a user
	var (
		stop           atomic.Bool
		ok, full, errs atomic.Int64
		okOf           [users + 1]atomic.Int64
		wg             sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				user := int64((w*5+i)%users + 1)
				code, err := depositStatus(d.URL, user)
				switch {
				case err != nil:
					errs.Add(1)
				case code == 200:
					ok.Add(1)
					okOf[user].Add(1)
				case code == 507:
					full.Add(1)
					time.Sleep(2 * time.Millisecond)
				default:
					errs.Add(1)
				}
			}
		})
	}
	for ok.Load() < 200 {
		time.Sleep(5 * time.Millisecond)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	ballast := filepath.Join(mnt, "ballast")
	free := int64(st.Bavail) * int64(st.Bsize)
	if err := os.WriteFile(ballast, make([]byte, free-40<<20), 0o600); err != nil {
		t.Fatalf("ballast: %v", err)
	}
	hangartest.WaitFor(t, 10*time.Second, "writes refused with 507", func() bool { return full.Load() > 50 })
	if available, _ := userMoney(t, d.URL, 1); available <= 0 {
		t.Fatal("reads stopped while the disk was full")
	}
	// Every write route answers the same code for the same cause.
	for _, w := range []struct {
		path    string
		body    []byte
		headers []string
	}{
		{"/api/views/full-disk-post", nil, nil},
		{"/webhook", hangartest.Update(9_000_001, 77, "/balance"), []string{"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret}},
		{"/orders", []byte(`{"user_id":1,"telegram_user_id":1,"spec_id":"sim-nano","region":"tokyo"}`), []string{"Authorization", "Bearer " + hangartest.WebhookSecret}},
	} {
		r := hangartest.Do(t, http.MethodPost, d.URL+w.path, w.body, append([]string{"Content-Type", "application/json"}, w.headers...)...)
		if r.Status != 507 || !strings.Contains(string(r.Body), "insufficient_storage") {
			t.Errorf("POST %s while full: %d %s", w.path, r.Status, r.Body)
		}
	}
	// The console's overview reads the alarm from the queue's snapshot.
	var q struct {
		Alarms struct{ Disk bool } `json:"alarms"`
		Disk   *struct {
			FreeBytes int64  `json:"free_bytes"`
			Refusing  string `json:"refusing"`
		} `json:"disk"`
	}
	r := hangartest.Do(t, http.MethodGet, d.URL+"/admin/queue", nil, "Authorization", "Bearer "+hangartest.AdminToken)
	if err := json.Unmarshal(r.Body, &q); err != nil || !q.Alarms.Disk || q.Disk == nil || q.Disk.Refusing == "" {
		t.Fatalf("GET /admin/queue while full: %s", r.Body)
	}
	os.Remove(ballast)
	resumed := ok.Load()
	hangartest.WaitFor(t, 10*time.Second, "writes taken again", func() bool { return ok.Load() > resumed+100 })
	stop.Store(true)
	wg.Wait()
	if errs.Load() > 0 {
		t.Fatalf("%d deposits got neither 200 nor 507", errs.Load())
	}
	if n := strings.Count(d.logs.String(), "below the free-space floor"); n != 1 {
		t.Fatalf("the full disk was logged %d times, want once", n)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()

	d = startDaemon(t, dir, env...)
	for user := int64(1); user <= users; user++ {
		available, sum := userMoney(t, d.URL, user)
		if available != okOf[user].Load() || sum != available {
			t.Fatalf("after a clean restart user %d: balance %d, ledger %d; %d deposits were acknowledged", user, available, sum, okOf[user].Load())
		}
	}
	t.Logf("%d deposits acknowledged, %d refused with 507 while full; all there after a clean restart", ok.Load(), full.Load())
}
