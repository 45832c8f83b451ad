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
}

// Booting reports whether an instance created at created is still inside the boot
// delay, which providers show as an instance not yet running.
func (s Settings) Booting(created time.Time) bool { return time.Since(created) < s.BootDelay }

// Option configures a fake.
type Option func(*Settings)

// WithLatency delays every answer by d.
func WithLatency(d time.Duration) Option { return func(s *Settings) { s.Latency = d } }

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
