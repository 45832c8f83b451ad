package pages

import "github.com/hangarhq/hangar/tui/common"

// The root holds pages as common.View; these fail the build if one stops being one.
var (
	_ common.View       = (*overview)(nil)
	_ common.View       = (*orders)(nil)
	_ common.ShortKeyer = (*orders)(nil)
	_ common.View       = (*deadLetters)(nil)
	_ common.View       = (*rateLimits)(nil)
	_ common.View       = (*blog)(nil)
	_ common.View       = (*outbox)(nil)
	_ common.View       = (*user)(nil)
	_ common.Capturer   = (*user)(nil)
	_ common.View       = (*moderation)(nil)
	_ common.View       = (*logs)(nil)
	_ common.View       = (*reconcile)(nil)
	_ common.View       = (*audit)(nil)
	_ common.View       = (*broadcasts)(nil)
	_ common.Capturer   = (*broadcasts)(nil)
)
