package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hangarhq/hangar/engine"
)

// billingConfig is issue 17's server billing: what a period is, how long an unpaid
// server stays suspended, and when users are reminded.
type billingConfig struct {
	Period time.Duration
	Grace  time.Duration
	Remind string
}

func addBillingFlags(f *envFlags, c *billingConfig) {
	f.Duration(&c.Period, "billing-period", "HANGAR_BILLING_PERIOD", 720*time.Hour,
		"what one payment of a plan's price buys; each period's end renews the server from the balance")
	f.Duration(&c.Grace, "billing-grace", "HANGAR_BILLING_GRACE", 72*time.Hour,
		"how long a server whose renewal the balance could not pay stays suspended (off) before it is deleted; 0: deleted at once")
	f.String(&c.Remind, "billing-remind", "HANGAR_BILLING_REMIND", "72h,24h",
		"when to remind a user before a period's end that the balance will not pay the next: durations, comma-separated (none: never)")
}

// reminders reads --billing-remind.
func (c billingConfig) reminders() ([]time.Duration, error) {
	s := strings.TrimSpace(c.Remind)
	out := []time.Duration{}
	if s == "" || strings.EqualFold(s, "none") {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--billing-remind %q: want positive durations such as 72h,24h, or none", c.Remind)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (c billingConfig) validate() error {
	var errs []error
	if c.Period < time.Second {
		errs = append(errs, errors.New("--billing-period must be at least 1s"))
	}
	if c.Grace < 0 {
		errs = append(errs, errors.New("--billing-grace cannot be negative"))
	}
	rem, err := c.reminders()
	errs = append(errs, err)
	for _, r := range rem {
		if r >= c.Period {
			errs = append(errs, fmt.Errorf("--billing-remind %v is not shorter than --billing-period %v", r, c.Period))
		}
	}
	return errors.Join(errs...)
}

func (c billingConfig) engineConfig() engine.BillingConfig {
	rem, _ := c.reminders()
	grace := c.Grace
	if grace == 0 {
		grace = -1 // the engine reads zero as its default
	}
	return engine.BillingConfig{Period: c.Period, Grace: grace, Remind: rem}
}
