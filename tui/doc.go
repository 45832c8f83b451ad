// Package tui owns the operations console: one root Bubble Tea model with a view per
// concern (overview, orders, dead letters, rate limits, blog, outbox), run locally by
// `hangar console` and per session by the SSH server in this package. Both reach the
// daemon only through the Daemon interface declared here, so the same model code runs
// in both places and in tests against an in-memory fake.
package tui
