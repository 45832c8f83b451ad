// Package keymap owns the console's key bindings, one set shared by every view so
// that a key means the same thing everywhere.
package keymap
