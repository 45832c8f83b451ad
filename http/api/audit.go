package api

import "time"

// Whoami is GET /admin/whoami: the caller's role ("operator" changes things, "viewer"
// only reads) and the name the audit log records them by.
type Whoami struct {
	Role  string `json:"role"`
	Actor string `json:"actor"`
}

// QueuePause is the answer to POST /admin/queue/pause and /resume. Changed is false
// when the queue already was in that state (Since then stays the first time).
type QueuePause struct {
	Paused  bool      `json:"paused"`
	Since   time.Time `json:"since"`
	Changed bool      `json:"changed"`
}

// AuditEntry is one change a person asked for (GET /admin/audit): who, when, what
// and how it ended. It carries no secret.
type AuditEntry struct {
	ID     uint64    `json:"id"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Role   string    `json:"role"`
	Method string    `json:"method"`
	Route  string    `json:"route"`
	Path   string    `json:"path"`
	Detail string    `json:"detail,omitempty"`
	Status int       `json:"status"`
	Code   string    `json:"code,omitempty"`
}

// AuditPage is a page of the audit log, newest first; NextBefore pages further back
// (0: no more).
type AuditPage struct {
	Entries    []AuditEntry `json:"entries"`
	NextBefore uint64       `json:"next_before"`
}
