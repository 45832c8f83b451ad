// Package common is what the console's root model and its pages share: the Daemon
// interface they reach hangar through, the per-session Common (context, styles,
// keymap, clock), the View contract every page meets, and the messages that cross
// between pages and the root (questions, outcomes, live events).
package common
