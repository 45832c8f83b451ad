package engine

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
)

// RetryPolicy computes the wait before each retry: Base, then Base×Factor, … capped
// at Cap, spread by ±Jitter (a share, 0.1 = ±10%) so that a burst of failures does
// not retry in lockstep.
type RetryPolicy struct {
	Base   time.Duration
	Factor float64
	Cap    time.Duration
	Jitter float64
}

// DefaultRetryPolicy is the seed's: 2 s, 4 s, 8 s.
var DefaultRetryPolicy = RetryPolicy{Base: 2 * time.Second, Factor: 2, Cap: 10 * time.Minute}

// Delay is the wait before retry number n (1 for the first retry).
func (p RetryPolicy) Delay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := float64(p.Base) * math.Pow(p.Factor, float64(n-1))
	if p.Cap > 0 && d > float64(p.Cap) {
		d = float64(p.Cap)
	}
	if p.Jitter > 0 {
		d *= 1 + p.Jitter*(2*rand.Float64()-1)
	}
	return time.Duration(d)
}

func (p *RetryPolicy) setDefaults() {
	if p.Base <= 0 {
		p.Base = DefaultRetryPolicy.Base
	}
	if p.Factor < 1 {
		p.Factor = DefaultRetryPolicy.Factor
	}
	if p.Cap <= 0 {
		p.Cap = DefaultRetryPolicy.Cap
	}
}

// maxProviderWait bounds how long a provider's Retry-After can hold a retry back.
const maxProviderWait = time.Hour

// retryAt is when the next attempt after a failure is due: the policy's wait, or the
// provider's Retry-After (a 429 or 503) if it asks for longer. Retried at the policy's
// pace alone, every retry of a rate-limited call landed inside the provider's window
// and the order was dead-lettered for the pace, not for any fault.
func retryAt(now time.Time, p RetryPolicy, attempts int, cause error) time.Time {
	d := p.Delay(attempts)
	if ra := min(cloud.RetryAfter(cause), maxProviderWait); ra > d {
		d = ra
	}
	return now.Add(d)
}
