package catalog

import (
	"errors"
	"testing"
)

func TestOrderableLeavesOutPlansOfProvidersThatAreOff(t *testing.T) {
	full := Default()
	simOnly := full.Orderable(func(p string) bool { return p == "sim" })
	for _, p := range simOnly.Plans {
		if p.Provider != "sim" {
			t.Errorf("plan %s of %s is listed with only the simulator on", p.SpecID, p.Provider)
		}
	}
	if len(simOnly.Plans) == 0 || len(full.Plans) == len(simOnly.Plans) {
		t.Fatalf("listed %d of %d plans", len(simOnly.Plans), len(full.Plans))
	}
	for _, tc := range []struct {
		spec, region string
		want         error
	}{
		{"sim-nano", "tokyo", nil},
		{"linode-nano", "ap-northeast", ErrPlanUnavailable},
		{"vultr-1g", "nrt", ErrPlanUnavailable},
		{"no-such-plan", "tokyo", ErrUnknownPlan},
		{"sim-nano", "mars", ErrUnknownRegion},
	} {
		t.Run(tc.spec+"/"+tc.region, func(t *testing.T) {
			_, err := simOnly.Lookup(tc.spec, tc.region)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Lookup: %v, want %v", err, tc.want)
			}
		})
	}
	// Orders placed while a provider was on still find their plan's name.
	if p, ok := simOnly.Get("linode-nano"); !ok || p.Name == "" {
		t.Fatal("Get lost a plan whose provider is off")
	}
	// The full catalogue is unchanged.
	if _, err := full.Lookup("linode-nano", "ap-northeast"); err != nil {
		t.Fatalf("Orderable changed its receiver: %v", err)
	}
}
