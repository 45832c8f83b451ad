// Package logring keeps the daemon's most recent log records in memory, secrets
// masked, for the console's log pane (GET /admin/logs). A Handler tees every record
// to the daemon's own handler and, scrubbed, into a bounded Ring.
package logring
