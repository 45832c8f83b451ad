package tui

import (
	"github.com/hangarhq/hangar/http/api"
)

// Messages only the root model sees; those shared with pages are in tui/common.
type (
	feedStartedMsg struct {
		ch  <-chan api.Event
		err error
	}
	eventsMsg struct {
		events []api.Event
		closed bool
	}
	// whoamiMsg answers GET /admin/whoami: the console's role.
	whoamiMsg struct {
		who api.Whoami
		err error
	}
	frameMsg struct{}
	pollMsg  struct{}
)
