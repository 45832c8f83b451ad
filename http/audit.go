package http

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// Audit keeps the record of every change made through the admin API (store.Store).
type Audit interface {
	AppendAudit(e store.AuditEntry) (store.AuditEntry, error)
	AuditLog(limit int, before uint64) ([]store.AuditEntry, error)
}

// audit records every change asked of an admin route (and every backup taken) after
// its handler has run, so
// the record says how it ended: who (principalOf), when, the route and the path with
// its ids, what the body asked for (secrets left out, see auditDetail) and the status.
// An error is turned into its response here, not by the app's error handler later,
// because the status is what gets recorded.
func (s *Server) audit(c *fiber.Ctx) error {
	if !operatorsOnly(c) || s.deps.Audit == nil {
		return c.Next()
	}
	if err := c.Next(); err != nil {
		if herr := c.App().ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	p := principalOf(c)
	e := store.AuditEntry{
		Actor: p.Actor, Role: p.Role, Method: c.Method(), Route: s.routeOf(c),
		Path: s.maskSecrets(strings.Clone(c.Path())), Detail: s.auditDetail(c), Status: c.Response().StatusCode(),
	}
	if e.Status >= 400 {
		var ae api.Error
		if json.Unmarshal(c.Response().Body(), &ae) == nil {
			e.Code = ae.Code
		}
	}
	if _, err := s.deps.Audit.AppendAudit(e); err != nil {
		// The change (if any) has happened and cannot be taken back: the log keeps
		// the record the store refused.
		s.cfg.Logger.Error("audit: could not record a change", "actor", e.Actor, "method", e.Method,
			"path", e.Path, "detail", e.Detail, "status", e.Status, "err", err)
	}
	return nil
}

// secretField is a body or query field never recorded: comment passwords, tokens and
// keys of any kind.
var secretField = regexp.MustCompile(`(?i)pass|token|secret|key|auth|cookie|salt|hash`)

const (
	auditValueMax = 120
	// auditFieldsMax bounds an entry's detail: each value was cut, but not their
	// number, and a refused viewer request of 40,000 fields stored 920 KB.
	auditFieldsMax = 32
)

// auditDetail is what a request asked for beyond its path, as "name=value" pairs in
// name order: the query, and a JSON body's top-level fields. Fields whose name
// suggests a secret are left out, any configured secret is masked wherever it
// appears, and long values are cut.
func (s *Server) auditDetail(c *fiber.Ctx) string {
	fields := map[string]string{}
	if q, err := url.ParseQuery(string(c.Request().URI().QueryString())); err == nil {
		for k, vs := range q {
			fields[k] = strings.Join(vs, ",")
		}
	}
	if body := c.Body(); len(body) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) == nil {
			for k, raw := range m {
				fields[k] = rawValue(raw)
			}
		} else {
			fields["body"] = fmt.Sprintf("(%d bytes, not a JSON object)", len(body))
		}
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		if !secretField.MatchString(k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for i, k := range names {
		if i == auditFieldsMax {
			fmt.Fprintf(&b, " … (+%d fields)", len(names)-i)
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(cut(k) + "=" + cut(s.maskSecrets(fields[k])))
	}
	return s.maskSecrets(b.String())
}

// rawValue shows a JSON value: strings unquoted, numbers and booleans as written,
// arrays and objects by their size only.
func rawValue(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return strconv.Quote(str)
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		return fmt.Sprintf("[%d items]", len(arr))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		return fmt.Sprintf("{%d fields}", len(obj))
	}
	return string(raw)
}

func cut(s string) string {
	if r := []rune(s); len(r) > auditValueMax {
		return string(r[:auditValueMax]) + "…"
	}
	return s
}

func (s *Server) maskSecrets(v string) string {
	for _, secret := range []string{s.cfg.AdminToken, s.cfg.ViewerToken, s.cfg.ConsoleToken, s.cfg.WebhookSecret} {
		if len(secret) >= 8 {
			v = strings.ReplaceAll(v, secret, "[secret]")
		}
	}
	return v
}

// auditLog is GET /admin/audit?limit=&before=: newest first.
func (s *Server) auditLog(c *fiber.Ctx) error {
	limit, err := queryLimit(c, 100, 1000)
	if err != nil {
		return err
	}
	var before uint64
	if raw := c.Query("before"); raw != "" {
		if before, err = strconv.ParseUint(raw, 10, 64); err != nil || before < 1 {
			return badRequest("bad_before", "before must be a positive audit entry id")
		}
	}
	entries, err := s.deps.Audit.AuditLog(limit, before)
	if err != nil {
		return err
	}
	page := api.AuditPage{Entries: make([]api.AuditEntry, 0, len(entries))}
	for _, e := range entries {
		page.Entries = append(page.Entries, api.AuditEntry(e))
	}
	if len(entries) == limit {
		page.NextBefore = entries[len(entries)-1].ID
	}
	return c.JSON(page)
}

// whoami is GET /admin/whoami: the console shows the role in its header and refuses
// a viewer's actions before sending them.
func (s *Server) whoami(c *fiber.Ctx) error {
	p := principalOf(c)
	return c.JSON(api.Whoami{Role: p.Role, Actor: p.Actor})
}

// routeOf is the pattern of the route a request was for. A request refused before its
// route ran (a viewer's) still sits on the group's middleware, so it is matched
// against the registered changes.
func (s *Server) routeOf(c *fiber.Ctx) string {
	if r := c.Route(); r.Method != "USE" && r.Path != "/admin" && r.Path != "/api/admin" {
		return r.Path
	}
	if isBackup(c) {
		return backupPath
	}
	path := strings.Split(strings.Trim(c.Path(), "/"), "/")
	for _, r := range s.AdminChanges() {
		if r.Method == c.Method() && patternMatches(strings.Split(strings.Trim(r.Path, "/"), "/"), path) {
			return r.Path
		}
	}
	return ""
}

// patternMatches matches Fiber's route syntax as the admin routes use it: ":name" is
// one segment, a final "*" the rest.
func patternMatches(pattern, path []string) bool {
	for i, p := range pattern {
		switch {
		case p == "*" && i == len(pattern)-1:
			return len(path) > i
		case i >= len(path):
			return false
		case strings.HasPrefix(p, ":"):
			if path[i] == "" {
				return false
			}
		case p != path[i]:
			return false
		}
	}
	return len(path) == len(pattern)
}

// Route is one registered route, by method and pattern.
type Route struct{ Method, Path string }

// AdminChanges lists every mutating route of the admin groups: the routes a viewer is
// refused and the audit log records. Tests walk it, so a route added later is covered
// without anyone remembering to list it.
func (s *Server) AdminChanges() []Route {
	var out []Route
	for _, r := range s.app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/admin/") && !strings.HasPrefix(r.Path, "/api/admin/") {
			continue
		}
		switch r.Method {
		case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace:
			continue
		}
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	return out
}
