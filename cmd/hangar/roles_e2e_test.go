package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/internal/sshtest"
)

const viewerToken = "e2e-viewer-token-0123456789"

func (d *daemon) asAdmin(t *testing.T, method, path, body string, status int) hangartest.Response {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	r := hangartest.Do(t, method, d.URL+path, b, "Authorization", "Bearer "+hangartest.AdminToken)
	if status != 0 && r.Status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, status)
	}
	return r
}

func (d *daemon) newOrder(t *testing.T, user int64) int64 {
	t.Helper()
	r := hangartest.Do(t, "POST", d.URL+"/orders", []byte(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"sim-nano","region":"tokyo"}`, user, user)),
		"Authorization", "Bearer "+hangartest.WebhookSecret)
	if r.Status != 201 {
		t.Fatalf("order: %d %s", r.Status, r.Body)
	}
	var o struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &o)
	return o.OrderID
}

func (d *daemon) adminOrder(t *testing.T, id int64) api.Order {
	t.Helper()
	var o api.Order
	d.asAdmin(t, "GET", fmt.Sprintf("/admin/orders/%d", id), "", 200).JSON(t, &o)
	return o
}

func (d *daemon) queueNow(t *testing.T) api.QueueStats {
	t.Helper()
	var q api.QueueStats
	d.asAdmin(t, "GET", "/admin/queue", "", 200).JSON(t, &q)
	return q
}

// simFast makes the simulator answer at once and never fail, so orders complete in a
// test's time once provisioning runs.
var simFast = []string{"HANGAR_SIM_LATENCY=20ms", "HANGAR_SIM_FAIL_RATE=0"}

// Pause survives a SIGKILL: the restarted daemon is still paused (since the same
// time), starts none of the orders taken before and after the crash, and completes
// them all once resumed.
func TestPauseSurvivesCrashThenOrdersComplete(t *testing.T) {
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, simFast...)
	d.asAdmin(t, "POST", "/admin/users/42/deposit", `{"amount":1000000}`, 200)
	var p api.QueuePause
	d.asAdmin(t, "POST", "/admin/queue/pause", "", 200).JSON(t, &p)
	ids := []int64{d.newOrder(t, 42), d.newOrder(t, 42)}
	time.Sleep(300 * time.Millisecond) // many dispatcher ticks and simulator latencies
	for _, id := range ids {
		if o := d.adminOrder(t, id); o.Status != "pending" || o.Attempts != 0 {
			t.Fatalf("order %d while paused: %s after %d attempts", id, o.Status, o.Attempts)
		}
	}
	d.kill()

	d = startDaemon(t, dataDir, simFast...)
	if q := d.queueNow(t); !q.Paused || q.PausedSince == nil || !q.PausedSince.Equal(p.Since) {
		t.Fatalf("after the crash: paused %v since %v, want since %v", q.Paused, q.PausedSince, p.Since)
	}
	if !strings.Contains(d.logs.String(), "provisioning is paused") {
		t.Errorf("the restarted daemon does not say it is paused:\n%s", d.logs.String())
	}
	ids = append(ids, d.newOrder(t, 42))
	time.Sleep(300 * time.Millisecond)
	for _, id := range ids {
		if o := d.adminOrder(t, id); o.Status != "pending" || o.Attempts != 0 {
			t.Fatalf("order %d after a restart while paused: %s after %d attempts", id, o.Status, o.Attempts)
		}
	}
	d.asAdmin(t, "POST", "/admin/queue/resume", "", 200)
	for _, id := range ids {
		hangartest.WaitFor(t, 20*time.Second, fmt.Sprintf("order %d to go active", id), func() bool {
			return d.adminOrder(t, id).Status == "active"
		})
	}
	if q := d.queueNow(t); q.Paused {
		t.Fatal("still paused after resume")
	}
}

// Every change made through the admin API is in GET /admin/audit after a SIGKILL,
// with who made it: the admin token, a claim made with it, or an SSH key vouched for
// by the daemon's own console. A viewer token and a viewer SSH key are refused every
// change, and the refusals are recorded too. No secret reaches the log.
func TestEveryChangeAuditedAcrossCrashAndViewersRefused(t *testing.T) {
	dataDir := t.TempDir()
	operator, viewer := sshtest.NewSigner(t), sshtest.NewSigner(t)
	write := func(name string, s gossh.Signer, comment string) {
		line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + comment + "\n"
		if err := os.WriteFile(filepath.Join(dataDir, name), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("authorized_keys", operator, "alice@laptop")
	write("viewer_keys", viewer, "carol@desk")
	sshAddr := freeAddr(t)
	env := append([]string{"HANGAR_VIEWER_TOKEN=" + viewerToken, "HANGAR_SSH_ADDR=" + sshAddr}, simFast...)
	d := startDaemon(t, dataDir, env...)

	const commentPassword = "e2e-comment-password-42"
	if r := hangartest.Do(t, "POST", d.URL+"/api/comments/hello", []byte(`{"name":"ann","content":"hi","password":"`+commentPassword+`"}`)); r.Status != 201 {
		t.Fatalf("comment: %d %s", r.Status, r.Body)
	}
	if r := hangartest.Do(t, "POST", d.URL+"/api/inquiries", []byte(`{"name":"bo","email":"bo@example.com","message":"hello"}`)); r.Status != 201 {
		t.Fatalf("inquiry: %d %s", r.Status, r.Body)
	}
	d.asAdmin(t, "POST", "/admin/users/42/deposit", `{"amount":1000000}`, 200)
	active := d.newOrder(t, 42)
	hangartest.WaitFor(t, 20*time.Second, "an order to go active", func() bool { return d.adminOrder(t, active).Status == "active" })
	d.asAdmin(t, "POST", "/admin/queue/pause", "", 200)
	pending := d.newOrder(t, 42)

	type change struct{ method, path, body string }
	changes := []change{
		{"POST", "/admin/users/43/deposit", `{"amount":5000,"note":"refund"}`},
		{"POST", fmt.Sprintf("/admin/orders/%d/cancel", pending), ""},
		{"POST", fmt.Sprintf("/admin/orders/%d/terminate", active), ""},
		{"POST", "/admin/dlq/requeue", ""},
		{"POST", fmt.Sprintf("/admin/dlq/%d/requeue", active), ""},
		{"DELETE", "/admin/dlq", ""},
		{"DELETE", "/admin/ratelimit/42", ""},
		{"POST", "/admin/queue/resume", ""},
		{"POST", "/admin/queue/pause", ""},
		{"DELETE", "/api/admin/comments/1", ""},
		{"POST", "/api/admin/inquiries/1/read", ""},
		{"DELETE", "/api/admin/slugs/hello", ""},
		{"POST", "/admin/reconcile", ""},
	}
	// The viewer token first: every change refused, nothing changed.
	for _, c := range changes {
		r := hangartest.Do(t, c.method, d.URL+c.path, []byte(c.body), "Authorization", "Bearer "+viewerToken)
		if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), `"read_only"`) {
			t.Errorf("viewer token %s %s: %d %s, want 403 read_only", c.method, c.path, r.Status, r.Body)
		}
	}
	// A backup is every record at once: operators only, and recorded.
	if r := hangartest.Do(t, "GET", d.URL+"/admin/backup", nil, "Authorization", "Bearer "+viewerToken); r.Status != http.StatusForbidden {
		t.Errorf("viewer token GET /admin/backup: %d, want 403", r.Status)
	}
	if r := hangartest.Do(t, "GET", d.URL+"/admin/backup", nil, "Authorization", "Bearer "+hangartest.AdminToken); r.Status != 200 || len(r.Body) == 0 {
		t.Errorf("admin GET /admin/backup: %d with %d bytes", r.Status, len(r.Body))
	}
	if o := d.adminOrder(t, pending); o.Status != "pending" {
		t.Fatalf("a viewer's cancel changed the order to %s", o.Status)
	}
	outcomes := map[string]int{}
	for _, c := range changes {
		r := hangartest.Do(t, c.method, d.URL+c.path, []byte(c.body),
			"Authorization", "Bearer "+hangartest.AdminToken, "X-Hangar-Actor", "bob@desk")
		outcomes[c.method+" "+c.path] = r.Status
	}

	// Over SSH: the viewer's console refuses at once; the operator's pauses (it is
	// paused already, so it resumes).
	vc, err := sshtest.Dial(sshAddr, viewer, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, vscr, vin := sshtest.Console(t, vc)
	vscr.WaitFor(t, "viewer: read-only")
	vscr.WaitFor(t, "queue depth")
	vin.Write([]byte("p"))
	vscr.WaitFor(t, "nothing was sent")
	vc.Close()
	oc, err := sshtest.Dial(sshAddr, operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, oscr, oin := sshtest.Console(t, oc)
	oscr.WaitFor(t, "PAUSED since")
	oin.Write([]byte("p"))
	oscr.WaitFor(t, "Resume provisioning?")
	oin.Write([]byte("y"))
	oscr.WaitFor(t, "provisioning resumed")
	oc.Close()

	d.kill()
	d = startDaemon(t, dataDir, env...)

	raw := d.asAdmin(t, "GET", "/admin/audit?limit=1000", "", 200)
	var page api.AuditPage
	raw.JSON(t, &page)
	type key struct{ actor, what string }
	got := map[key]api.AuditEntry{}
	for _, e := range page.Entries {
		got[key{e.Actor, e.Method + " " + e.Path}] = e
	}
	for _, c := range changes {
		what := c.method + " " + c.path
		if e, ok := got[key{"viewer token", what}]; !ok || e.Status != 403 || e.Code != "read_only" || e.Role != "viewer" {
			t.Errorf("the viewer's refused %s is not audited as such: %+v", what, e)
		}
		if e, ok := got[key{"admin token (console: bob@desk)", what}]; !ok || e.Status != outcomes[what] || e.Role != "operator" {
			t.Errorf("%s (answered %d) is not audited: %+v", what, outcomes[what], e)
		}
	}
	if e, ok := got[key{"viewer token", "GET /admin/backup"}]; !ok || e.Status != 403 || e.Route != "/admin/backup" {
		t.Errorf("the viewer's refused backup is not audited: %+v", e)
	}
	if e, ok := got[key{"admin token", "GET /admin/backup"}]; !ok || e.Status != 200 {
		t.Errorf("the backup taken is not audited: %+v", e)
	}
	sshActor := "ssh " + gossh.FingerprintSHA256(operator.PublicKey()) + " alice@laptop"
	if _, ok := got[key{sshActor, "POST /admin/queue/resume"}]; !ok {
		t.Errorf("the SSH operator's resume is not audited as %q", sshActor)
	}
	for _, e := range page.Entries {
		if strings.Contains(e.Actor, "carol@desk") {
			t.Errorf("the viewer key's console sent a change: %+v", e)
		}
	}
	if e := got[key{"admin token (console: bob@desk)", "POST /admin/users/43/deposit"}]; !strings.Contains(e.Detail, "amount=5000") {
		t.Errorf("the deposit's amount is not recorded: %+v", e)
	}
	for _, secret := range []string{hangartest.AdminToken, viewerToken, hangartest.WebhookSecret, commentPassword} {
		if strings.Contains(string(raw.Body), secret) {
			t.Errorf("the audit log holds a secret (%q)", secret)
		}
	}
	if q := d.queueNow(t); q.Paused {
		t.Error("the SSH operator's resume did not outlive the crash")
	}
}
