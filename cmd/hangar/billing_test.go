package main

import (
	"slices"
	"testing"
	"time"
)

// --billing-remind reads a comma-separated list; none switches reminders off; a
// reminder as long as the period, a negative grace or a short period are refused.
func TestBillingFlags(t *testing.T) {
	tests := []struct {
		name    string
		cfg     billingConfig
		remind  []time.Duration
		wantErr bool
	}{
		{name: "defaults", cfg: billingConfig{Period: 720 * time.Hour, Grace: 72 * time.Hour, Remind: "72h,24h"}, remind: []time.Duration{72 * time.Hour, 24 * time.Hour}},
		{name: "spaces and a repeat", cfg: billingConfig{Period: time.Hour, Remind: " 10m, 1m ,10m"}, remind: []time.Duration{10 * time.Minute, time.Minute}},
		{name: "none", cfg: billingConfig{Period: time.Hour, Remind: "none"}, remind: []time.Duration{}},
		{name: "empty", cfg: billingConfig{Period: time.Hour, Remind: ""}, remind: []time.Duration{}},
		{name: "not a duration", cfg: billingConfig{Period: time.Hour, Remind: "tomorrow"}, wantErr: true},
		{name: "zero reminder", cfg: billingConfig{Period: time.Hour, Remind: "0s"}, wantErr: true},
		{name: "reminder as long as the period", cfg: billingConfig{Period: 24 * time.Hour, Remind: "72h,24h"}, wantErr: true},
		{name: "negative grace", cfg: billingConfig{Period: time.Hour, Grace: -time.Second, Remind: "none"}, wantErr: true},
		{name: "period under a second", cfg: billingConfig{Period: time.Millisecond, Remind: "none"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("validate: %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			ec := tt.cfg.engineConfig()
			if !slices.Equal(ec.Remind, tt.remind) || ec.Remind == nil {
				t.Errorf("reminders %v, want %v (non-nil)", ec.Remind, tt.remind)
			}
			if ec.Period != tt.cfg.Period {
				t.Errorf("period %v", ec.Period)
			}
		})
	}
	// A zero grace reaches the engine as "none", not as its 72h default.
	if g := (billingConfig{Period: time.Hour, Remind: "none"}).engineConfig().Grace; g >= 0 {
		t.Errorf("zero grace became %v", g)
	}
}

// The billing settings come from HANGAR_* and flags win.
func TestBillingFromEnvironment(t *testing.T) {
	clearHangarEnv(t)
	t.Setenv("HANGAR_ADMIN_TOKEN", "super-secret-admin-token")
	t.Setenv("HANGAR_BILLING_PERIOD", "2s")
	t.Setenv("HANGAR_BILLING_GRACE", "3s")
	t.Setenv("HANGAR_BILLING_REMIND", "1s")
	cfg, err := parseServeFlags([]string{"--billing-grace", "4s"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Billing.Period != 2*time.Second || cfg.Billing.Grace != 4*time.Second || cfg.Billing.Remind != "1s" {
		t.Fatalf("billing %+v", cfg.Billing)
	}
}
