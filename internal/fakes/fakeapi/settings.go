package fakeapi

import "time"

// Settings are what every fake can be told when it starts. They are fixed once NewFake
// returns, so handlers read them without a lock; each provider reads them in its own
// terms (what a booting instance looks like, which query parameter names a page size).
type Settings struct {
	// Latency is only where SetLatency starts: later changes do not show here.
	Latency   time.Duration
	BootDelay time.Duration
	Plans     map[string]bool
	Regions   map[string]bool
	// PageSize applies when a list request names none.
	PageSize int
	// CreateDelay is how long a create takes at the provider before the instance exists
	// and can be listed; the provider finishes it even if the client has gone away, as a
	// real cloud does. This is the race a crash during a create meets.
	CreateDelay time.Duration
	// DuplicateLabels lets two instances share a label (Vultr always does; Linode's
	// fake refuses a taken label unless this is set).
	DuplicateLabels bool
}

// Booting reports whether an instance created at created is still inside the boot
// delay, which providers show as an instance not yet running.
func (s Settings) Booting(created time.Time) bool { return time.Since(created) < s.BootDelay }

// Option configures a fake.
type Option func(*Settings)

// WithLatency delays every answer by d.
func WithLatency(d time.Duration) Option { return func(s *Settings) { s.Latency = d } }

// WithCreateDelay makes every create take d before the instance exists.
func WithCreateDelay(d time.Duration) Option { return func(s *Settings) { s.CreateDelay = d } }

// WithDuplicateLabels lets instances share a label.
func WithDuplicateLabels() Option { return func(s *Settings) { s.DuplicateLabels = true } }

// WithBootDelay keeps new instances booting for d.
func WithBootDelay(d time.Duration) Option { return func(s *Settings) { s.BootDelay = d } }

// WithPlans accepts more plan ids besides the provider's defaults.
func WithPlans(ids ...string) Option { return func(s *Settings) { addAll(s.Plans, ids) } }

// WithRegions accepts more region ids besides the provider's defaults.
func WithRegions(ids ...string) Option { return func(s *Settings) { addAll(s.Regions, ids) } }

// WithPageSize sets the page size used when a list request names none; below 1 means 1,
// as a zero page could never be walked to the end.
func WithPageSize(n int) Option { return func(s *Settings) { s.PageSize = max(n, 1) } }

func addAll(set map[string]bool, ids []string) {
	for _, id := range ids {
		set[id] = true
	}
}
