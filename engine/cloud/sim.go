package cloud

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SimInvalid is the plan or region the simulator refuses permanently, so that the
// dead-letter path can be exercised without a real account.
const SimInvalid = "invalid"

// SimConfig shapes the simulator.
type SimConfig struct {
	// Each Create takes a uniformly random time in [LatencyMin, LatencyMax].
	LatencyMin, LatencyMax time.Duration
	// FailRate is the share of Create calls that fail retryably (0 never, 1 always).
	FailRate float64
	// Rand makes latency and failures deterministic; nil seeds one randomly.
	Rand *rand.Rand
}

// Sim is the built-in provider used when no cloud account is configured. Instances
// live in memory and are keyed by label, so Create is idempotent per label exactly as
// the queue expects of a real provider's FindByLabel-then-Create.
//
// A Create in flight costs only its caller's goroutine and one timer, so thousands can
// wait at once.
type Sim struct {
	min, max time.Duration
	failRate float64

	rmu sync.Mutex // rand.Rand is not safe for concurrent use
	rnd *rand.Rand

	mu      sync.Mutex
	byLabel map[string]Instance
	labelOf map[string]string // id -> label
	seq     uint64
}

// NewSim returns a simulator; an inverted latency range is read as [max, min].
func NewSim(cfg SimConfig) *Sim {
	s := &Sim{
		min: max(cfg.LatencyMin, 0), max: max(cfg.LatencyMax, 0),
		failRate: min(max(cfg.FailRate, 0), 1),
		rnd:      cfg.Rand,
		byLabel:  map[string]Instance{},
		labelOf:  map[string]string{},
	}
	if s.max < s.min {
		s.min, s.max = s.max, s.min
	}
	if s.rnd == nil {
		s.rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return s
}

// Name is "sim".
func (s *Sim) Name() string { return "sim" }

// Create returns the instance already holding req.Label, or makes one after the
// simulated latency.
func (s *Sim) Create(ctx context.Context, req CreateRequest) (Instance, error) {
	if req.Label == "" || req.Region == "" || req.Plan == "" {
		return Instance{}, s.refuse("create", http.StatusBadRequest, "label, region and plan are required")
	}
	if req.Plan == SimInvalid || req.Region == SimInvalid {
		return Instance{}, s.refuse("create", http.StatusBadRequest, fmt.Sprintf("invalid plan or region %q/%q", req.Plan, req.Region))
	}
	if in, ok := s.lookup(req.Label); ok {
		return in, nil
	}
	delay, fail := s.roll()
	if err := wait(ctx, delay); err != nil {
		return Instance{}, s.interrupted("create", err)
	}
	if fail {
		return Instance{}, &Error{Op: "create", Provider: s.Name(), Status: http.StatusServiceUnavailable, Retryable: true,
			Err: errors.New("sim: provider returned 503 (simulated)")}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Another Create for the same label may have finished while this one waited.
	if in, ok := s.byLabel[req.Label]; ok {
		return in, nil
	}
	s.seq++
	in := Instance{
		ID:     "sim-" + strconv.FormatUint(s.seq, 10),
		Label:  req.Label,
		IPv4:   simIP(s.seq),
		Status: "running",
		Region: req.Region,
		Plan:   req.Plan,
	}
	s.byLabel[in.Label] = in
	s.labelOf[in.ID] = in.Label
	return in, nil
}

// FindByLabel looks the label up.
func (s *Sim) FindByLabel(ctx context.Context, label string) (Instance, bool, error) {
	if err := ctx.Err(); err != nil {
		return Instance{}, false, s.interrupted("find", err)
	}
	in, ok := s.lookup(label)
	return in, ok, nil
}

// Get reads one instance by id.
func (s *Sim) Get(ctx context.Context, id string) (Instance, error) {
	if err := ctx.Err(); err != nil {
		return Instance{}, s.interrupted("get", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	label, ok := s.labelOf[id]
	if !ok {
		return Instance{}, s.refuse("get", http.StatusNotFound, fmt.Sprintf("instance %q not found", id))
	}
	return s.byLabel[label], nil
}

// Delete forgets one instance; one that is already gone counts as deleted.
func (s *Sim) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return s.interrupted("delete", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if label, ok := s.labelOf[id]; ok {
		delete(s.byLabel, label)
		delete(s.labelOf, id)
	}
	return nil
}

// Count is how many instances exist.
func (s *Sim) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byLabel)
}

func (s *Sim) lookup(label string) (Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.byLabel[label]
	return in, ok
}

func (s *Sim) roll() (time.Duration, bool) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	d := s.min
	if s.max > s.min {
		d += time.Duration(s.rnd.Int64N(int64(s.max-s.min) + 1))
	}
	return d, s.rnd.Float64() < s.failRate
}

func (s *Sim) refuse(op string, status int, msg string) error {
	return &Error{Op: op, Provider: s.Name(), Status: status, Err: errors.New("sim: " + msg)}
}

// interrupted reports the caller's context ending: a cancellation is the caller's
// decision, a deadline is a timeout like any other.
func (s *Sim) interrupted(op string, err error) error {
	return &Error{Op: op, Provider: s.Name(), Retryable: !errors.Is(err, context.Canceled), Err: err}
}

// wait blocks for d or until ctx ends, without a goroutine of its own.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// simIP hands out documentation addresses (TEST-NET-3, then TEST-NET-2), which route
// nowhere; past 508 instances they repeat.
func simIP(n uint64) string {
	i := (n - 1) % 508
	if i < 254 {
		return fmt.Sprintf("203.0.113.%d", i+1)
	}
	return fmt.Sprintf("198.51.100.%d", i-254+1)
}

// ParseLatency reads --sim-latency: a range "15s-30s", one duration "20s", or "0".
func ParseLatency(s string) (lo, hi time.Duration, err error) {
	s = strings.TrimSpace(s)
	a, b, isRange := strings.Cut(s, "-")
	if lo, err = parseNonNegative(a); err != nil {
		return 0, 0, fmt.Errorf("sim latency %q: %w", s, err)
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseNonNegative(b); err != nil {
		return 0, 0, fmt.Errorf("sim latency %q: %w", s, err)
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("sim latency %q: the range ends before it starts", s)
	}
	return lo, hi, nil
}

func parseNonNegative(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("want a duration like 20s or a range like 15s-30s")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration like 20s or a range like 15s-30s")
	}
	if d < 0 {
		return 0, errors.New("latency cannot be negative")
	}
	return d, nil
}
