package http_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// The audit log keeps the newest 100,000 entries and cuts each field's value to 120
// characters, so that it stays bounded. But an entry's detail holds every top-level
// field of the body, however many: one request with a viewer's token (refused 403
// read_only, and recorded as the README promises) stores its whole body-sized detail.
// At --max-body (1 MiB) per entry, a viewer who may change nothing can make the
// store write ~100 GB of audit log, and pushes every operator's entry out on the way.
func TestViewerRefusalStoresABoundedAuditDetail(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	var body bytes.Buffer
	body.WriteByte('{')
	for i := range 40_000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `"field%06d":"%s"`, i, "xxxxxxxx")
	}
	body.WriteByte('}')
	r := hangartest.Do(t, http.MethodPost, env.URL+"/admin/dlq/requeue", body.Bytes(),
		"Authorization", "Bearer "+hangartest.ViewerToken)
	if r.Status != http.StatusForbidden {
		t.Fatalf("viewer's requeue: %d %s, want 403", r.Status, r.Body)
	}
	page := auditPage(t, env, "?limit=1")
	if len(page.Entries) != 1 {
		t.Fatalf("audit log: %+v", page)
	}
	e := page.Entries[0]
	if e.Actor != "viewer token" || e.Status != http.StatusForbidden {
		t.Fatalf("newest audit entry is not the viewer's refusal: %+v", e)
	}
	const bound = 16 << 10 // generous: many fields of 120 characters each
	if len(e.Detail) > bound {
		t.Fatalf("one refused viewer request (a %d-byte body) stored an audit entry with a %d-byte detail; want the detail bounded (at most %d bytes)",
			body.Len(), len(e.Detail), bound)
	}
}

// A broadcast's "by" names who asked (README, docs/admin-api.md: the audit log's
// actor), and the console's broadcast view shows it. An operator at the SSH console
// who broadcasts is in the audit log as their key, yet the broadcast says "admin":
// http/broadcast.go reads c.Locals("actor"), which nothing sets (the principal lives
// under "hangar.principal"), so every broadcast is by "admin".
func TestBroadcastByNamesTheAuditActor(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	if r := env.PostUpdate(t, hangartest.Update(1, 42, "/plans")); r.Status != 200 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	env.Settle(t)
	const who = "SHA256:test alice@laptop"
	r := hangartest.Do(t, http.MethodPost, env.URL+"/admin/broadcast", []byte(`{"text":"maintenance at 03:00"}`),
		"Authorization", "Bearer "+hangartest.ConsoleToken, "X-Hangar-Role", "operator", "X-Hangar-Actor", who)
	if r.Status != http.StatusCreated {
		t.Fatalf("broadcast: %d %s", r.Status, r.Body)
	}
	var b api.Broadcast
	r.JSON(t, &b)
	var actor string
	hangartest.WaitFor(t, 5*time.Second, "the broadcast in the audit log", func() bool {
		for _, e := range auditPage(t, env, "?limit=10").Entries {
			if e.Route == "/admin/broadcast" && e.Status == http.StatusCreated {
				actor = e.Actor
				return true
			}
		}
		return false
	})
	if b.By != actor {
		t.Fatalf("broadcast #%d is by %q; the audit log records it as made by %q", b.ID, b.By, actor)
	}
}

// The audit log masks "any configured secret" (README), and viewers read it. The
// detail is masked, the path is not: an operator who pastes a token where an id
// goes (a charge id, a slug: free text) leaves it in clear for every viewer, who can
// then act as an operator with it.
func TestAuditPathMasksConfiguredSecrets(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	r := env.Admin(t, http.MethodPost, "/admin/payments/"+hangartest.AdminToken+"/refund", nil)
	if r.Status == http.StatusOK {
		t.Fatalf("refund of a made-up charge: %d %s", r.Status, r.Body)
	}
	page := hangartest.Do(t, http.MethodGet, env.URL+"/admin/audit?limit=5", nil, "Authorization", "Bearer "+hangartest.ViewerToken)
	if page.Status != http.StatusOK {
		t.Fatalf("viewer reading the audit log: %d %s", page.Status, page.Body)
	}
	if bytes.Contains(page.Body, []byte(hangartest.AdminToken)) {
		t.Fatalf("a viewer reads the admin token in the audit log: %s", page.Body)
	}
}
