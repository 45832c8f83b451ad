package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
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
				c.Queue.SimLatency != "15s-30s" || c.Queue.SimFailRate != 0.1 || c.Demo != demoOff || c.WebhookSecret != "" {
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
		{name: "connection budget and shutdown defaults", check: func(t *testing.T, c serveConfig) {
			if c.MaxConns != 0 || c.MaxSSHSessions != 0 || c.SSHHandshakeTimeout != 10*time.Second ||
				c.SSHIdleTimeout != 30*time.Minute || c.MetricsAddr != "" || c.ShutdownTimeout != 5*time.Second {
				t.Fatalf("defaults = %+v", c)
			}
		}},
		{name: "connection budget from env and flags", env: map[string]string{"HANGAR_MAX_CONNS": "300", "HANGAR_MAX_SSH_SESSIONS": "4",
			"HANGAR_SSH_HANDSHAKE_TIMEOUT": "3s", "HANGAR_METRICS_ADDR": "127.0.0.1:9100"},
			args: []string{"--ssh-idle-timeout", "5m", "--shutdown-timeout", "3s", "--max-conns", "500"},
			check: func(t *testing.T, c serveConfig) {
				if c.MaxConns != 500 || c.MaxSSHSessions != 4 || c.SSHHandshakeTimeout != 3*time.Second ||
					c.SSHIdleTimeout != 5*time.Minute || c.MetricsAddr != "127.0.0.1:9100" || c.ShutdownTimeout != 3*time.Second {
					t.Fatalf("budget = %+v", c)
				}
			}},
		{name: "negative connection cap", args: []string{"--max-conns", "-1"}, err: "max-conns"},
		{name: "zero handshake timeout", args: []string{"--ssh-handshake-timeout", "0s"}, err: "ssh-handshake-timeout"},
		{name: "shutdown budget under a second", args: []string{"--shutdown-timeout", "10ms"}, err: "shutdown-timeout"},
		{name: "metrics on the public listener", args: []string{"--http", "127.0.0.1:9", "--metrics-addr", "127.0.0.1:9"}, err: "metrics-addr"},
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
		"HANGAR_SIM_FAIL_RATE", "HANGAR_DEMO", "HANGAR_METRICS_ADDR", "HANGAR_MAX_CONNS", "HANGAR_MAX_SSH_SESSIONS",
		"HANGAR_SSH_HANDSHAKE_TIMEOUT", "HANGAR_SSH_IDLE_TIMEOUT", "HANGAR_SHUTDOWN_TIMEOUT",
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

// The caps left at 0 come from the open-file limit, leaving the reserve to the store
// and outgoing calls; set ones are kept.
func TestConnectionBudgetFromTheFileLimit(t *testing.T) {
	cases := []struct {
		nofile     uint64
		set        serveConfig
		conns, ssh int
	}{
		{nofile: 1024, conns: 672, ssh: 56},
		{nofile: 256, conns: 96, ssh: 8},
		{nofile: 64, conns: 672, ssh: 56}, // below the reserve: treated as unknown (1024)
		{nofile: 1 << 20, conns: 100_000, ssh: 64},
		{nofile: 1024, set: serveConfig{MaxConns: 10, MaxSSHSessions: 1}, conns: 10, ssh: 1},
	}
	for _, c := range cases {
		got := c.set
		got.connBudget(c.nofile)
		if got.MaxConns != c.conns || got.MaxSSHSessions != c.ssh {
			t.Errorf("nofile %d, set %d/%d: caps %d/%d, want %d/%d", c.nofile, c.set.MaxConns, c.set.MaxSSHSessions,
				got.MaxConns, got.MaxSSHSessions, c.conns, c.ssh)
		}
		if c.set.MaxConns == 0 && c.nofile > fdReserve && uint64(got.MaxConns+got.MaxSSHSessions)+fdReserve > c.nofile {
			t.Errorf("nofile %d: caps %d+%d leave less than the reserve", c.nofile, got.MaxConns, got.MaxSSHSessions)
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

// `hangar serve --help | grep HANGAR_DATA_DIR` works: help goes to stdout, with sizes
// in the units the README uses; every command's --help does the same.
func TestHelpGoesToStdoutInHumanUnits(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--help"}, {"deposit", "--help"}, {"dlq", "--help"}, {"console", "--help"},
		{"backup", "--help"}, {"restore", "--help"}, {"repair", "--help"}, {"telegram", "--help"},
		{"version", "--help"}, {"health", "--help"},
	} {
		cmd := exec.Command(hangarBin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("hangar %v: %v\n%s", args, err, stderr.String())
			continue
		}
		if !strings.Contains(stdout.String(), "Usage") {
			t.Errorf("hangar %v: no usage on stdout (stderr: %q)", args, stderr.String())
		}
	}
	out, err := exec.Command(hangarBin, "serve", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HANGAR_DATA_DIR", "(default 1MiB)", "(default 512MiB)", "(default 256MiB)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}

// A misspelt HANGAR_* variable is named at start, with the setting it resembles.
func TestUnknownEnvironmentVariablesAreNamed(t *testing.T) {
	if _, err := parseServeFlagsTo(nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := unknownEnv([]string{"HANGAR_ADMIN_TOKNE=x", "HANGAR_DATA_DIR=/d", "HANGAR_WHATEVER_THIS_IS=1", "PATH=/bin", "HANGAR_CONSOLE_ADDR=h:1"})
	want := [][2]string{{"HANGAR_ADMIN_TOKNE", "HANGAR_ADMIN_TOKEN"}, {"HANGAR_WHATEVER_THIS_IS", ""}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("unknownEnv = %v, want %v", got, want)
	}
}
