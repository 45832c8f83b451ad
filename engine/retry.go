package engine

import (
	"math"
	"math/rand/v2"
	"time"
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
