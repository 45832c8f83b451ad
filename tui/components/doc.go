// Package components holds the console's widgets: a table whose cursor follows a row's
// key, the tab bar, sparklines and bars, and the text helpers every page uses (money,
// durations, truncation at word boundaries, secret masking). They keep no knowledge of
// the daemon; pages in the tui package put them together.
package components
