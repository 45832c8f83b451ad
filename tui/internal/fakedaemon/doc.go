// Package fakedaemon owns an in-memory daemon for the console's tests: it answers the
// tui.Daemon calls from fixed data (paging orders and refusing to terminate any but an
// active one, as the admin API does), records every call, and lets a test push events,
// make the daemon unreachable, make one call fail (Fail) or hold it in flight (Hold).
// Only tests import it.
package fakedaemon
