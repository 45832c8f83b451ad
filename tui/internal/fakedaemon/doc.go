// Package fakedaemon owns an in-memory daemon for the console's tests: it answers the
// tui.Daemon calls from fixed data, records every call, and lets a test push events
// or make the daemon unreachable. Only tests import it.
package fakedaemon
