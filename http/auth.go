package http

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"
)

// secretEqual compares in constant time. Hashing first makes the comparison
// independent of the lengths too.
func secretEqual(given, want string) bool {
	a := sha256.Sum256([]byte(given))
	b := sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(c *fiber.Ctx) (string, bool) {
	h := c.Get(fiber.HeaderAuthorization)
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// requireBearer admits requests carrying want as their bearer token: 401 without a
// bearer, 403 with a wrong one, unset when want is empty (the feature is switched off
// until configured).
func requireBearer(want string, unset *apiError) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if want == "" {
			return unset
		}
		token, ok := bearer(c)
		if !ok {
			return errUnauthorized
		}
		if !secretEqual(token, want) {
			return errForbidden
		}
		return c.Next()
	}
}

// Roles of the admin API's callers: operators change things, viewers only look.
const (
	RoleOperator = "operator"
	RoleViewer   = "viewer"
)

// Headers the console sends. HeaderRole can only lower a caller's role (a viewer SSH
// key's session asks to be a viewer), so it is honoured from anyone. HeaderActor names
// the person behind a request: believed from the daemon's own SSH console (which alone
// holds ConsoleToken and has checked the key), and recorded only as a claim from
// anyone else.
const (
	HeaderRole  = "X-Hangar-Role"
	HeaderActor = "X-Hangar-Actor"
)

var errReadOnly = newError(fiber.StatusForbidden, "read_only", "this token or key is a viewer's: it can read everything and change nothing")

// principal is who an admin request comes from, as the audit log names them: never
// the token itself.
type principal struct {
	Role  string
	Actor string
}

const localsPrincipal = "hangar.principal"

func principalOf(c *fiber.Ctx) principal {
	p, _ := c.Locals(localsPrincipal).(principal)
	return p
}

// adminAuth admits the admin token (an operator), the viewer token (a viewer) and
// the daemon's own console token (the role and person its SSH server vouches for),
// and refuses a viewer every change with 403 read_only. Each token is compared
// whatever the others gave, so the time taken says nothing about which one matched.
func (s *Server) adminAuth(c *fiber.Ctx) error {
	admin, viewer, console := s.cfg.AdminToken, s.cfg.ViewerToken, s.cfg.ConsoleToken
	token, ok := bearer(c)
	isAdmin := ok && admin != "" && secretEqual(token, admin)
	isViewer := ok && viewer != "" && secretEqual(token, viewer)
	isConsole := ok && console != "" && secretEqual(token, console)
	switch {
	case isConsole:
	case admin == "" && viewer == "":
		// Only the daemon's own console gets in: to everyone else the admin API is
		// switched off until a token is configured.
		return errAdminUnset
	case !ok:
		return errUnauthorized
	}
	claim := cleanActor(c.Get(HeaderActor))
	var p principal
	switch {
	case isConsole:
		// The SSH console always says which role the key has; a session that somehow
		// does not is given the lesser one.
		p = principal{Role: RoleViewer, Actor: "ssh console"}
		if c.Get(HeaderRole) == RoleOperator {
			p.Role = RoleOperator
		}
		if claim != "" {
			p.Actor = "ssh " + claim
		}
	case isAdmin:
		p = principal{Role: RoleOperator, Actor: "admin token"}
		if claim != "" {
			p.Actor += " (console: " + claim + ")"
		}
	case isViewer:
		p = principal{Role: RoleViewer, Actor: "viewer token"}
		if claim != "" {
			p.Actor += " (console: " + claim + ")"
		}
	default:
		return errForbidden
	}
	if c.Get(HeaderRole) == RoleViewer {
		p.Role = RoleViewer
	}
	c.Locals(localsPrincipal, p)
	return c.Next()
}

// mutating is a request that changes something: everything but reads.
func mutating(c *fiber.Ctx) bool {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return false
	}
	return true
}

// backupPath is the one read kept from viewers: a backup is every record of the store
// at once (comment password hashes, visitors' IPs, sealed passwords), a copy to take
// away rather than something to look at.
const backupPath = "/admin/backup"

var errBackupOperatorsOnly = newError(fiber.StatusForbidden, "read_only", "backups hold every record of the store: operators only")

// operatorsOnly is a request only an operator may make, and that the audit log records.
func operatorsOnly(c *fiber.Ctx) bool { return mutating(c) || isBackup(c) }

// isBackup is a request the router sends to the backup: Fiber matches paths without
// regard to case or a trailing slash, so "/admin/backup/" and "/ADMIN/BACKUP" are the
// backup too (a viewer downloaded the store through them, and nothing was audited).
func isBackup(c *fiber.Ctx) bool {
	return strings.EqualFold(strings.TrimRight(c.Path(), "/"), backupPath)
}

// refuseViewers answers a viewer's change 403 read_only before any handler runs; the
// audit middleware around it records the refusal.
func refuseViewers(c *fiber.Ctx) error {
	if operatorsOnly(c) && principalOf(c).Role != RoleOperator {
		if !mutating(c) {
			return errBackupOperatorsOnly
		}
		return errReadOnly
	}
	return c.Next()
}

// cleanActor keeps a claimed name printable and short: it ends up in the audit log
// and on operators' screens.
func cleanActor(s string) string {
	// Clone: the header's bytes belong to fasthttp and are reused after the request.
	s = strings.Clone(strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, strings.TrimSpace(s)))
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}

// adminGuard is what every admin group (/admin, /api/admin) runs first, in order:
// who is asking, the record of what they changed, and the viewers' refusal (inside
// the record, so a refusal is recorded too).
func (s *Server) adminGuard() []fiber.Handler {
	return []fiber.Handler{s.adminAuth, s.audit, refuseViewers}
}
