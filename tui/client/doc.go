// Package client owns the console's connection to a running daemon: the admin REST
// calls over net/http and the Server-Sent Events feed, which it keeps alive by itself
// (reconnect with backoff, idle detection) and hands out through a bounded channel so
// that a slow console never holds the daemon's stream open unread.
package client
