package cloud_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine/cloud"
)

// Power off and on through each provider's real client against its fake: the server
// reads off after PowerOff and ready again after PowerOn, either call repeated is
// harmless (the queue retries them), and an unknown server is a permanent error.
func TestPowerOffAndOn(t *testing.T) {
	type powered interface {
		cloud.Provider
		cloud.PowerSwitch
	}
	cases := []struct {
		name string
		open func(t *testing.T) powered
	}{
		{"sim", func(t *testing.T) powered {
			return cloud.NewSim(cloud.SimConfig{Rand: rand.New(rand.NewPCG(1, 2))})
		}},
	}
	for _, pc := range providerCases() {
		cases = append(cases, struct {
			name string
			open func(t *testing.T) powered
		}{pc.name, func(t *testing.T) powered {
			p, _ := pc.start(t, 0)
			return p.(powered)
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req := cloud.CreateRequest{Label: "hangar-order-7", Region: "jp-osa", Plan: "g6-nanode-1", RootPassword: rootPass}
			if tc.name == "vultr" {
				req.Region, req.Plan = "icn", "vc2-1c-1gb"
			}
			in, err := p.Create(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for step, off := range []bool{true, true, false, false} {
				call := p.PowerOn
				if off {
					call = p.PowerOff
				}
				if err := call(ctx, in.ID); err != nil {
					t.Fatalf("step %d (off=%v): %v", step, off, err)
				}
				got, err := p.Get(ctx, in.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Ready() == off {
					t.Errorf("step %d: off=%v but the server reads %q (ready %v)", step, off, got.Status, got.Ready())
				}
			}
			err = p.PowerOff(ctx, wrongID(tc.name))
			if err == nil || !cloud.IsPermanent(err) {
				t.Errorf("power off of an unknown server: %v, want a permanent error", err)
			}
			var ce *cloud.Error
			if !errors.As(err, &ce) || ce.Op != "power_off" {
				t.Errorf("error %v does not name its operation power_off", err)
			}
		})
	}
}

func wrongID(provider string) string {
	switch provider {
	case "linode":
		return "49999999"
	case "vultr":
		return "cb676a46-66fd-4dfb-b839-999999999999"
	}
	return "sim-999"
}
