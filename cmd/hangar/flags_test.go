package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestServeFlagsAndEnvironment(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, c serveConfig)
		err   string
	}{
		{name: "defaults", check: func(t *testing.T, c serveConfig) {
			if c.DataDir != "./data" || c.HTTPAddr != "127.0.0.1:8080" || c.SSHAddr != "127.0.0.1:2222" ||
				c.RateLimit != 30 || c.RateWindow != time.Minute || c.MaxBody != 1<<20 ||
				c.Queue.MaxConcurrency != 5 || c.Queue.MaxRetries != 3 || c.Queue.RetryBase != 2*time.Second ||
				c.Queue.SimLatency != "15s-30s" || c.Queue.SimFailRate != 0.1 || c.Demo || c.WebhookSecret != "" {
				t.Fatalf("defaults = %+v", c)
			}
		}},
		{name: "environment", env: map[string]string{"HANGAR_RATE_LIMIT": "5", "HANGAR_RATE_WINDOW": "2m", "HANGAR_MAX_BODY": "64KiB", "HANGAR_WEBHOOK_SECRET": "abc_DEF-1"},
			check: func(t *testing.T, c serveConfig) {
				if c.RateLimit != 5 || c.RateWindow != 2*time.Minute || c.MaxBody != 64<<10 || c.WebhookSecret != "abc_DEF-1" {
					t.Fatalf("from env = %+v", c)
				}
			}},
		{name: "flags win", env: map[string]string{"HANGAR_RATE_LIMIT": "5", "HANGAR_HTTP_ADDR": "127.0.0.1:1"},
			args: []string{"--rate-limit", "7", "--http", "127.0.0.1:2", "--max-body", "2MiB"},
			check: func(t *testing.T, c serveConfig) {
				if c.RateLimit != 7 || c.HTTPAddr != "127.0.0.1:2" || c.MaxBody != 2<<20 {
					t.Fatalf("flags = %+v", c)
				}
			}},
		{name: "bad number in env", env: map[string]string{"HANGAR_RATE_LIMIT": "lots"}, err: "HANGAR_RATE_LIMIT"},
		{name: "bad duration in env", env: map[string]string{"HANGAR_RETRY_BASE": "soon"}, err: "HANGAR_RETRY_BASE"},
		{name: "bad size", args: []string{"--max-body", "huge"}, err: "size"},
		{name: "secret outside Telegram's alphabet", args: []string{"--webhook-secret", "has space"}, err: "webhook-secret"},
		{name: "short admin token", args: []string{"--admin-token", "short"}, err: "admin-token"},
		{name: "zero rate limit", args: []string{"--rate-limit", "0"}, err: "rate-limit"},
		{name: "fail rate above 1", args: []string{"--sim-fail-rate", "1.5"}, err: "sim-fail-rate"},
		{name: "bad latency range", args: []string{"--sim-latency", "30s-10s"}, err: "sim-latency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearHangarEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := parseServeFlagsTo(tt.args, io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one naming %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

// TestServeHelpDocumentsEveryVariable holds --help to DESIGN.md's configuration
// contract, and checks secrets set in the environment are never echoed.
func TestServeHelpDocumentsEveryVariable(t *testing.T) {
	clearHangarEnv(t)
	t.Setenv("HANGAR_ADMIN_TOKEN", "super-secret-admin-token")
	t.Setenv("HANGAR_BOT_TOKEN", "123:secret-bot-token")
	var out bytes.Buffer
	cmd := []string{"--help"}
	_, err := parseServeFlagsTo(cmd, &out)
	if err == nil {
		t.Fatal("--help did not stop parsing")
	}
	help := out.String()
	for _, name := range []string{
		"HANGAR_DATA_DIR", "HANGAR_HTTP_ADDR", "HANGAR_SSH_ADDR", "HANGAR_WEBHOOK_SECRET", "HANGAR_ADMIN_TOKEN",
		"HANGAR_BOT_TOKEN", "HANGAR_TELEGRAM_API", "HANGAR_ADMIN_CHAT_ID", "HANGAR_LINODE_TOKEN", "HANGAR_LINODE_API",
		"HANGAR_VULTR_API_KEY", "HANGAR_VULTR_API", "HANGAR_AUTHORIZED_KEYS", "HANGAR_RATE_LIMIT", "HANGAR_RATE_WINDOW",
		"HANGAR_MAX_BODY", "HANGAR_MAX_CONCURRENCY", "HANGAR_MAX_RETRIES", "HANGAR_RETRY_BASE", "HANGAR_SIM_LATENCY",
		"HANGAR_SIM_FAIL_RATE", "HANGAR_DEMO",
	} {
		if !strings.Contains(help, name) {
			t.Errorf("--help does not document %s", name)
		}
	}
	for _, secret := range []string{"super-secret-admin-token", "secret-bot-token"} {
		if strings.Contains(help, secret) {
			t.Fatalf("--help printed a secret from the environment")
		}
	}
}

// clearHangarEnv blanks every HANGAR_* variable of the caller's environment (empty
// counts as unset), so that the test sees only what it sets.
func clearHangarEnv(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "HANGAR_") {
			t.Setenv(k, "")
		}
	}
}
