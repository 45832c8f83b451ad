package catalog

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
)

//go:embed plans.json
var defaultPlans []byte

// Plan is one orderable server.
type Plan struct {
	SpecID   string   `json:"spec_id"`
	Name     string   `json:"name"`
	Provider string   `json:"provider"` // linode, vultr or sim
	Plan     string   `json:"plan"`     // the provider's plan id
	Regions  []string `json:"regions"`
	Price    int64    `json:"price"` // monthly, integer minor units of Currency
}

// HasRegion reports whether the plan can be ordered in region.
func (p Plan) HasRegion(region string) bool { return slices.Contains(p.Regions, region) }

// Catalog is the set of plans, keyed by spec_id.
type Catalog struct {
	Currency string `json:"currency"`
	Plans    []Plan `json:"plans"`
	byID     map[string]Plan
	// off names the providers this server cannot order from (no token): their plans
	// are left out of Plans and refused by Lookup, yet Get still finds them for the
	// orders placed before.
	off map[string]bool
}

// Errors of Lookup.
var (
	ErrUnknownPlan   = errors.New("unknown plan")
	ErrUnknownRegion = errors.New("the plan is not offered in that region")
	// ErrPlanUnavailable is a plan in the catalogue whose provider is not switched on
	// here: an order for it could only fail.
	ErrPlanUnavailable = errors.New("plan unavailable")
)

var specIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// Default returns the catalogue shipped with hangar.
func Default() *Catalog {
	c, err := Parse(defaultPlans)
	if err != nil {
		panic("catalog: shipped plans.json is invalid: " + err.Error())
	}
	return c
}

// Load reads a catalogue file; an empty path means the shipped default.
func Load(path string) (*Catalog, error) {
	if path == "" {
		return Default(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	return c, nil
}

// Parse validates a catalogue document.
func Parse(b []byte) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if len(c.Plans) == 0 {
		return nil, errors.New("no plans")
	}
	c.byID = map[string]Plan{}
	for i, p := range c.Plans {
		switch {
		case !specIDRE.MatchString(p.SpecID):
			return nil, fmt.Errorf("plan %d: spec_id %q must be 1-32 of a-z 0-9 -", i, p.SpecID)
		case p.Provider != "linode" && p.Provider != "vultr" && p.Provider != "sim":
			return nil, fmt.Errorf("plan %s: provider %q must be linode, vultr or sim", p.SpecID, p.Provider)
		case p.Plan == "":
			return nil, fmt.Errorf("plan %s: provider plan id is empty", p.SpecID)
		case len(p.Regions) == 0:
			return nil, fmt.Errorf("plan %s: no regions", p.SpecID)
		case p.Price < 0:
			return nil, fmt.Errorf("plan %s: negative price", p.SpecID)
		}
		if _, dup := c.byID[p.SpecID]; dup {
			return nil, fmt.Errorf("plan %s: listed twice", p.SpecID)
		}
		c.byID[p.SpecID] = p
	}
	sort.SliceStable(c.Plans, func(i, j int) bool { return c.Plans[i].Price < c.Plans[j].Price })
	return &c, nil
}

// Lookup finds a plan and checks the region.
func (c *Catalog) Lookup(specID, region string) (Plan, error) {
	p, ok := c.byID[specID]
	if !ok {
		return Plan{}, fmt.Errorf("%w %q", ErrUnknownPlan, specID)
	}
	if c.off[p.Provider] {
		return Plan{}, fmt.Errorf("%w: %s is a %s plan and %s is not configured on this server, so it cannot be ordered", ErrPlanUnavailable, specID, p.Provider, p.Provider)
	}
	if !p.HasRegion(region) {
		return Plan{}, fmt.Errorf("%w: %s offers %v", ErrUnknownRegion, specID, p.Regions)
	}
	return p, nil
}

// Get returns a plan by spec_id.
func (c *Catalog) Get(specID string) (Plan, bool) {
	p, ok := c.byID[specID]
	return p, ok
}

// Orderable returns the catalogue as this server can sell it: plans of providers for
// which enabled is false are no longer listed and Lookup refuses them with
// ErrPlanUnavailable. c itself is not changed.
func (c *Catalog) Orderable(enabled func(provider string) bool) *Catalog {
	out := &Catalog{Currency: c.Currency, byID: c.byID, off: map[string]bool{}}
	for _, p := range c.Plans {
		if enabled(p.Provider) {
			out.Plans = append(out.Plans, p)
		} else {
			out.off[p.Provider] = true
		}
	}
	return out
}
