package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// concrete fills a route pattern's parameters so the request reaches it.
func concrete(pattern string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		switch {
		case strings.HasPrefix(p, ":"):
			parts[i] = "1"
		case p == "*":
			parts[i] = "some-slug"
		}
	}
	return strings.Join(parts, "/")
}

func auditPage(t *testing.T, env *hangartest.Env, query string) api.AuditPage {
	t.Helper()
	r := env.Admin(t, http.MethodGet, "/admin/audit"+query, nil)
	if r.Status != 200 {
		t.Fatalf("GET /admin/audit: %d %s", r.Status, r.Body)
	}
	var p api.AuditPage
	r.JSON(t, &p)
	return p
}

// A viewer — the viewer token, or any token with the role header lowered to viewer,
// or the console's token without an operator role — is refused every change the
// admin groups have, each refusal is in the audit log under who asked, and nothing
// changed. The routes come from the app itself, so a route added later is covered.
func TestViewersAreRefusedEveryChange(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	routes := env.HTTP().AdminChanges()
	if len(routes) < 15 {
		t.Fatalf("only %d admin change routes registered: %v", len(routes), routes)
	}
	viewers := []struct {
		name    string
		headers []string
		actor   string
	}{
		{"viewer token", []string{"Authorization", "Bearer " + hangartest.ViewerToken}, "viewer token"},
		{"admin token lowered to viewer", []string{"Authorization", "Bearer " + hangartest.AdminToken, "X-Hangar-Role", "viewer",
			"X-Hangar-Actor", "SHA256:abc bob@desk"}, "admin token (console: SHA256:abc bob@desk)"},
		{"console token without a role", []string{"Authorization", "Bearer " + hangartest.ConsoleToken}, "ssh console"},
		{"viewer token claiming to be an operator", []string{"Authorization", "Bearer " + hangartest.ViewerToken, "X-Hangar-Role", "operator"}, "viewer token"},
	}
	for _, v := range viewers {
		t.Run(v.name, func(t *testing.T) {
			if r := hangartest.Do(t, http.MethodGet, env.URL+"/admin/queue", nil, v.headers...); r.Status != 200 {
				t.Fatalf("a viewer cannot read the queue: %d %s", r.Status, r.Body)
			}
			var who api.Whoami
			hangartest.Do(t, http.MethodGet, env.URL+"/admin/whoami", nil, v.headers...).JSON(t, &who)
			if who.Role != "viewer" || who.Actor != v.actor {
				t.Fatalf("whoami = %+v, want viewer %q", who, v.actor)
			}
			for _, rt := range routes {
				r := hangartest.Do(t, rt.Method, env.URL+concrete(rt.Path), []byte(`{"amount":5000}`), v.headers...)
				var e api.Error
				if r.Status != http.StatusForbidden || json.Unmarshal(r.Body, &e) != nil || e.Code != "read_only" {
					t.Errorf("%s %s as %s: %d %s, want 403 read_only", rt.Method, rt.Path, v.name, r.Status, r.Body)
				}
			}
			page := auditPage(t, env, fmt.Sprintf("?limit=%d", len(routes)))
			seen := map[string]bool{}
			for _, e := range page.Entries {
				if e.Actor == v.actor && e.Role == "viewer" && e.Status == 403 && e.Code == "read_only" {
					seen[e.Method+" "+e.Route] = true
				}
			}
			for _, rt := range routes {
				if !seen[rt.Method+" "+rt.Path] {
					t.Errorf("the refused %s %s is not in the audit log as %q", rt.Method, rt.Path, v.actor)
				}
			}
		})
	}
	if b, _ := env.Store.GetBalance(1); b.Available != 0 {
		t.Fatalf("a refused deposit credited %d", b.Available)
	}
}

// Changes are recorded with who, what and how they ended; a claimed console identity
// is recorded as the claim of the token that made it; no secret reaches the log.
func TestAuditRecordsChangesWithoutSecrets(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	const password = "comment-password-hunter2"
	if r := hangartest.Do(t, http.MethodPost, env.URL+"/api/comments/hello", []byte(`{"name":"ann","content":"hi","password":"`+password+`"}`)); r.Status != 201 {
		t.Fatalf("add comment: %d %s", r.Status, r.Body)
	}
	claim := []string{"Authorization", "Bearer " + hangartest.AdminToken, "X-Hangar-Actor", "SHA256:xyz alice@laptop"}
	console := []string{"Authorization", "Bearer " + hangartest.ConsoleToken, "X-Hangar-Role", "operator", "X-Hangar-Actor", "SHA256:xyz alice@laptop"}
	steps := []struct {
		headers            []string
		method, path, body string
		status             int
		actor, detail      string
	}{
		{claim, "POST", "/admin/users/7/deposit", `{"amount":5000,"password":"` + password + `","note":"` + hangartest.AdminToken + `"}`, 200,
			"admin token (console: SHA256:xyz alice@laptop)", `amount=5000 note="[secret]"`},
		{console, "POST", "/admin/queue/pause", "", 200, "ssh SHA256:xyz alice@laptop", ""},
		{nil, "POST", "/admin/queue/resume", "", 200, "admin token", ""},
		{nil, "POST", "/admin/orders/999/cancel", "", 404, "admin token", ""},
		{nil, "DELETE", "/admin/ratelimit/7", "", 200, "admin token", ""},
		{nil, "DELETE", "/api/admin/comments/1", "", 200, "admin token", ""},
		{nil, "POST", "/admin/dlq/requeue", "", 200, "admin token", ""},
		{nil, "DELETE", "/admin/dlq", "", 200, "admin token", ""},
	}
	for _, s := range steps {
		h := s.headers
		if h == nil {
			h = []string{"Authorization", "Bearer " + hangartest.AdminToken}
		}
		var body []byte
		if s.body != "" {
			body = []byte(s.body)
		}
		if r := hangartest.Do(t, s.method, env.URL+s.path, body, h...); r.Status != s.status {
			t.Fatalf("%s %s: %d %s, want %d", s.method, s.path, r.Status, r.Body, s.status)
		}
	}
	page := auditPage(t, env, "")
	if len(page.Entries) != len(steps) {
		t.Fatalf("%d audit entries, want %d: %+v", len(page.Entries), len(steps), page.Entries)
	}
	for i, s := range steps {
		e := page.Entries[len(steps)-1-i] // newest first
		if e.Method != s.method || e.Path != s.path || e.Status != s.status || e.Actor != s.actor || e.Role != "operator" || e.Detail != s.detail {
			t.Errorf("entry %d = %+v\nwant %s %s %d by %q detail %q", i, e, s.method, s.path, s.status, s.actor, s.detail)
		}
		if e.At.IsZero() {
			t.Errorf("entry %d has no time", i)
		}
	}
	if e := page.Entries[len(steps)-4]; e.Code != "not_found" || e.Route != "/admin/orders/:id/cancel" {
		t.Errorf("the failed cancel is recorded as %+v", e)
	}
	raw := env.Admin(t, http.MethodGet, "/admin/audit", nil).Body
	for _, secret := range []string{password, hangartest.AdminToken, hangartest.ViewerToken, hangartest.ConsoleToken, hangartest.WebhookSecret} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the audit log holds a secret %q: %s", secret, raw)
		}
	}
	// Reads are not changes.
	env.Admin(t, http.MethodGet, "/admin/orders", nil)
	if n := len(auditPage(t, env, "").Entries); n != len(steps) {
		t.Fatalf("a read was audited: %d entries", n)
	}
	// Paging: before the newest id leaves it out.
	older := auditPage(t, env, fmt.Sprintf("?limit=2&before=%d", page.Entries[0].ID))
	if len(older.Entries) != 2 || older.Entries[0].ID >= page.Entries[0].ID || older.NextBefore != older.Entries[1].ID {
		t.Fatalf("page before %d = %+v", page.Entries[0].ID, older)
	}
}

// POST /admin/queue/pause and /resume answer the state, and pausing twice keeps the
// first time; GET /admin/queue says paused and since when.
func TestPauseResumeOverHTTP(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	var p api.QueuePause
	env.Admin(t, http.MethodPost, "/admin/queue/pause", nil).JSON(t, &p)
	if !p.Paused || !p.Changed || p.Since.IsZero() {
		t.Fatalf("pause = %+v", p)
	}
	env.Clock.Advance(90)
	var again api.QueuePause
	env.Admin(t, http.MethodPost, "/admin/queue/pause", nil).JSON(t, &again)
	if !again.Paused || again.Changed || !again.Since.Equal(p.Since) {
		t.Fatalf("second pause = %+v, want unchanged since %v", again, p.Since)
	}
	var q api.QueueStats
	env.Admin(t, http.MethodGet, "/admin/queue", nil).JSON(t, &q)
	if !q.Paused || q.PausedSince == nil || !q.PausedSince.Equal(p.Since) {
		t.Fatalf("queue while paused: paused %v since %v", q.Paused, q.PausedSince)
	}
	var r api.QueuePause
	env.Admin(t, http.MethodPost, "/admin/queue/resume", nil).JSON(t, &r)
	if r.Paused || !r.Changed {
		t.Fatalf("resume = %+v", r)
	}
	q = api.QueueStats{}
	env.Admin(t, http.MethodGet, "/admin/queue", nil).JSON(t, &q)
	if q.Paused || q.PausedSince != nil {
		t.Fatalf("queue after resume: paused %v since %v", q.Paused, q.PausedSince)
	}
}
