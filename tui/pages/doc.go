// Package pages holds the console's screens, one file each: overview, orders, dead
// letters, rate limits, blog and outbox. Each is a common.View built from
// tui/components; the root model in package tui routes keys and messages to them.
package pages
