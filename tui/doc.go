// Package tui owns the operations console, laid out as soft-serve's UI is: this
// package is the root model (event feed, refresh clock, banner, questions, filter,
// help) and the SSH server; tui/pages holds one file per screen (overview, orders,
// dead letters, rate limits, blog, outbox); tui/components the widgets they are built
// from (a table whose cursor follows the item, the tab bar, money and text helpers);
// tui/common what they share (the Daemon interface, the per-session Common, the View
// contract and the messages between pages and root); tui/styles and tui/keymap the one
// palette and the one keymap. `hangar console` runs it locally and the SSH server runs
// it per session; both reach the daemon only through Daemon, so the same code runs in
// both places and in tests against an in-memory fake.
package tui
