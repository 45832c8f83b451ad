package tui

import "github.com/hangarhq/hangar/tui/common"

// Daemon is everything the console needs from a running hangar (see common.Daemon);
// tui/client implements it over the admin HTTP API, tests use tui/internal/fakedaemon.
type Daemon = common.Daemon
