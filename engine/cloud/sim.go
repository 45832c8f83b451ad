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

	"github.com/hangarhq/hangar/store"
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

// SimStore keeps the simulator's servers across restarts (store.Store implements it).
type SimStore interface {
	NextSimSeq() (uint64, error)
	PutSimServer(v store.SimServer) error
	DeleteSimServer(seq uint64) error
	SimServers() ([]store.SimServer, error)
}

// Sim is the built-in provider used when no cloud account is configured. Instances
// are keyed by label (and kept in a SimStore when OpenSim gave one), so Create is idempotent per label exactly as
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
	st      SimStore // nil: memory only
}

// OpenSim returns a simulator whose servers live in st: names (sim-N) and addresses
// are never reused, and a restart finds every server an earlier run created.
func OpenSim(cfg SimConfig, st SimStore) (*Sim, error) {
	s := NewSim(cfg)
	all, err := st.SimServers()
	if err != nil {
		return nil, fmt.Errorf("sim: load servers: %w", err)
	}
	for _, v := range all {
		in := Instance{ID: simID(v.Seq), Label: v.Label, IPv4: v.IPv4, Status: v.Status, Region: v.Region, Plan: v.Plan, Created: v.CreatedAt}
		s.byLabel[in.Label] = in
		s.labelOf[in.ID] = in.Label
	}
	s.st = st
	return s, nil
}

func simID(seq uint64) string { return "sim-" + strconv.FormatUint(seq, 10) }

func simSeq(id string) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, "sim-"), 10, 64)
	return n, err == nil && strings.HasPrefix(id, "sim-")
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
	seq, err := s.nextSeq()
	if err != nil {
		return Instance{}, err
	}
	in := Instance{
		ID:      simID(seq),
		Label:   req.Label,
		IPv4:    simIP(seq),
		Status:  "running",
		Region:  req.Region,
		Plan:    req.Plan,
		Created: time.Now().UTC(),
	}
	s.mu.Lock()
	// Another Create for the same label may have finished while this one waited.
	if in, ok := s.byLabel[req.Label]; ok {
		s.mu.Unlock()
		return in, nil
	}
	s.byLabel[in.Label] = in
	s.labelOf[in.ID] = in.Label
	s.mu.Unlock()
	if s.st != nil {
		// The store's group commit takes many creates at once, so the lock is not held
		// across the write; a failed write takes the server back.
		err := s.st.PutSimServer(store.SimServer{Seq: seq, Label: in.Label, IPv4: in.IPv4, Status: in.Status,
			Region: in.Region, Plan: in.Plan, CreatedAt: in.Created})
		if err != nil {
			s.forget(in.ID)
			return Instance{}, &Error{Op: "create", Provider: s.Name(), Status: http.StatusServiceUnavailable, Retryable: true,
				Err: fmt.Errorf("sim: record server: %w", err)}
		}
	}
	return in, nil
}

// nextSeq numbers a new server: from the store when there is one, so that a restart
// never hands out a name or address twice.
func (s *Sim) nextSeq() (uint64, error) {
	if s.st != nil {
		n, err := s.st.NextSimSeq()
		if err != nil {
			return 0, &Error{Op: "create", Provider: s.Name(), Status: http.StatusServiceUnavailable, Retryable: true,
				Err: fmt.Errorf("sim: number a server: %w", err)}
		}
		return n, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq, nil
}

func (s *Sim) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if label, ok := s.labelOf[id]; ok {
		delete(s.byLabel, label)
		delete(s.labelOf, id)
	}
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
	if seq, ok := simSeq(id); ok && s.st != nil {
		if err := s.st.DeleteSimServer(seq); err != nil {
			return &Error{Op: "delete", Provider: s.Name(), Status: http.StatusServiceUnavailable, Retryable: true,
				Err: fmt.Errorf("sim: forget server: %w", err)}
		}
	}
	s.forget(id)
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
// nowhere, then the shared address space 100.64.0.0/10, which no public server has:
// about four million servers before an address repeats.
func simIP(n uint64) string {
	i := n - 1
	switch {
	case i < 254:
		return fmt.Sprintf("203.0.113.%d", i+1)
	case i < 508:
		return fmt.Sprintf("198.51.100.%d", i-254+1)
	}
	i = (i - 508) % (1 << 22)
	return fmt.Sprintf("100.%d.%d.%d", 64+i>>16, (i>>8)&0xff, i&0xff)
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

// PowerOff marks the instance "offline", as Linode words a stopped server; it is
// kept in the store so a restart sees it off.
func (s *Sim) PowerOff(ctx context.Context, id string) error {
	return s.power(ctx, "power_off", id, "offline")
}

// PowerOn marks the instance "running" again.
func (s *Sim) PowerOn(ctx context.Context, id string) error {
	return s.power(ctx, "power_on", id, "running")
}

func (s *Sim) power(ctx context.Context, op, id, status string) error {
	if err := ctx.Err(); err != nil {
		return s.interrupted(op, err)
	}
	delay, fail := s.roll()
	if err := wait(ctx, min(delay, time.Second)); err != nil {
		return s.interrupted(op, err)
	}
	if fail {
		return &Error{Op: op, Provider: s.Name(), Status: http.StatusServiceUnavailable, Retryable: true,
			Err: errors.New("sim: provider returned 503 (simulated)")}
	}
	s.mu.Lock()
	label, ok := s.labelOf[id]
	if !ok {
		s.mu.Unlock()
		return s.refuse(op, http.StatusNotFound, fmt.Sprintf("instance %q not found", id))
	}
	in := s.byLabel[label]
	in.Status = status
	s.byLabel[label] = in
	s.mu.Unlock()
	if seq, ok := simSeq(id); ok && s.st != nil {
		err := s.st.PutSimServer(store.SimServer{Seq: seq, Label: in.Label, IPv4: in.IPv4, Status: in.Status,
			Region: in.Region, Plan: in.Plan, CreatedAt: in.Created})
		if err != nil {
			return &Error{Op: op, Provider: s.Name(), Status: http.StatusServiceUnavailable, Retryable: true,
				Err: fmt.Errorf("sim: record server: %w", err)}
		}
	}
	return nil
}
