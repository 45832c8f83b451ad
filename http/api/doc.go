// Package api owns the console's view of the daemon's wire format: the JSON bodies of
// the admin API and the events of its Server-Sent Events stream, as fixed by
// docs/admin-api.md. It has no behaviour, so that the console (package tui), its HTTP
// client (tui/client) and test fakes can share the types without importing each other.
package api
