package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/store"
)

// queueConfig holds the provisioning settings of `hangar serve`.
type queueConfig struct {
	MaxConcurrency int
	MaxRetries     int
	RetryBase      time.Duration
	RetryFactor    float64
	RetryCap       time.Duration
	RetryJitter    float64
	AlarmDepth     int
	AlarmDLQ       int
	AlarmLag       time.Duration
	OrdersPerHour  int
	PollInterval   time.Duration
	Plans          string
	SimLatency     string
	SimFailRate    float64
	LinodeToken    string
	LinodeAPI      string
	VultrKey       string
	VultrAPI       string
	// One server per order and secrets (issue 14).
	CreateSettle     time.Duration
	ReconcileEvery   time.Duration
	ReconcileOrphans bool
	PasswordWindow   time.Duration
}

func addQueueFlags(f *envFlags, c *queueConfig) {
	f.Int(&c.MaxConcurrency, "max-concurrency", "HANGAR_MAX_CONCURRENCY", 5, "orders provisioned at once")
	f.Int(&c.MaxRetries, "max-retries", "HANGAR_MAX_RETRIES", 3, "retries before the dead letter queue (0: none)")
	f.Duration(&c.RetryBase, "retry-base", "HANGAR_RETRY_BASE", 2*time.Second, "first retry backoff; multiplied by --retry-factor each retry")
	f.Float(&c.RetryFactor, "retry-factor", "HANGAR_RETRY_FACTOR", 2, "backoff multiplier per retry")
	f.Duration(&c.RetryCap, "retry-cap", "HANGAR_RETRY_CAP", 10*time.Minute, "longest backoff")
	f.Float(&c.RetryJitter, "retry-jitter", "HANGAR_RETRY_JITTER", 0, "backoff spread, a share: 0.1 = ±10%")
	f.Int(&c.AlarmDepth, "alarm-depth", "HANGAR_ALARM_DEPTH", 500, "alarm when more orders than this wait")
	f.Int(&c.AlarmDLQ, "alarm-dead-letters", "HANGAR_ALARM_DEAD_LETTERS", 10, "alarm when the dead-letter list holds more than this")
	f.Duration(&c.AlarmLag, "alarm-lag", "HANGAR_ALARM_LAG", 10*time.Minute, "alarm when the oldest waiting order is older than this")
	f.Int(&c.OrdersPerHour, "orders-per-hour", "HANGAR_ORDERS_PER_HOUR", 10, "orders one user may place per hour")
	f.Duration(&c.PollInterval, "poll-interval", "HANGAR_POLL_INTERVAL", 3*time.Second, "how often to ask a provider for a new server's IP")
	f.String(&c.Plans, "plans", "HANGAR_PLANS", "", "plan catalogue JSON file (default: the shipped catalogue)")
	f.String(&c.SimLatency, "sim-latency", "HANGAR_SIM_LATENCY", "15s-30s", "simulated provider latency: a duration or a range such as 15s-30s")
	f.Float(&c.SimFailRate, "sim-fail-rate", "HANGAR_SIM_FAIL_RATE", 0.1, "share of simulated calls that fail retryably")
	f.Secret(&c.LinodeToken, "linode-token", "HANGAR_LINODE_TOKEN", "Linode API token; switches the linode provider on")
	f.String(&c.LinodeAPI, "linode-api", "HANGAR_LINODE_API", "", "Linode API base URL (default: the public API)")
	f.Secret(&c.VultrKey, "vultr-api-key", "HANGAR_VULTR_API_KEY", "Vultr API key; switches the vultr provider on")
	f.String(&c.VultrAPI, "vultr-api", "HANGAR_VULTR_API", "", "Vultr API base URL (default: the public API)")
	f.Duration(&c.CreateSettle, "create-settle", "HANGAR_CREATE_SETTLE", cloud.DefaultSettle,
		"how long Linode and Vultr get to finish a create cut by a crash or stop before the order looks for its server (the simulator: its longest latency)")
	f.Duration(&c.ReconcileEvery, "reconcile-every", "HANGAR_RECONCILE_EVERY", 10*time.Minute,
		"how often the providers' hangar-order-* servers are compared with the orders (0: only on POST /admin/reconcile)")
	f.Bool(&c.ReconcileOrphans, "reconcile-delete-orphans", "HANGAR_RECONCILE_DELETE_ORPHANS", false,
		"delete servers whose order is missing, failed, cancelled or terminated (otherwise they are only reported)")
	f.Duration(&c.PasswordWindow, "password-window", "HANGAR_PASSWORD_WINDOW", 15*time.Minute,
		"how long after a server is ready its owner can ask for the root password again with /password")
}

func (c queueConfig) reconcileConfig() engine.ReconcileConfig {
	every := c.ReconcileEvery
	if every <= 0 {
		every = -1 // the engine reads 0 as "default"
	}
	return engine.ReconcileConfig{Every: every, DeleteOrphans: c.ReconcileOrphans}
}

func (c queueConfig) validate() error {
	var errs []error
	if c.MaxConcurrency < 1 || c.MaxConcurrency > 100000 {
		errs = append(errs, errors.New("--max-concurrency must be 1 to 100000"))
	}
	if c.MaxRetries < 0 || c.MaxRetries > 100 {
		errs = append(errs, errors.New("--max-retries must be 0 to 100"))
	}
	if c.RetryBase <= 0 || c.RetryFactor < 1 || c.RetryJitter < 0 || c.RetryJitter >= 1 {
		errs = append(errs, errors.New("--retry-base must be positive, --retry-factor at least 1, --retry-jitter in [0, 1)"))
	}
	if c.SimFailRate < 0 || c.SimFailRate > 1 {
		errs = append(errs, errors.New("--sim-fail-rate must be between 0 and 1"))
	}
	if _, _, err := cloud.ParseLatency(c.SimLatency); err != nil {
		errs = append(errs, fmt.Errorf("--sim-latency: %w", err))
	}
	if c.CreateSettle <= 0 || c.PasswordWindow <= 0 {
		errs = append(errs, errors.New("--create-settle and --password-window must be positive"))
	}
	if c.OrdersPerHour < 1 {
		errs = append(errs, errors.New("--orders-per-hour must be at least 1"))
	}
	return errors.Join(errs...)
}

func (c queueConfig) engineConfig() engine.QueueConfig {
	retries := c.MaxRetries
	if retries == 0 {
		retries = -1 // the engine reads 0 as "default"
	}
	return engine.QueueConfig{
		MaxConcurrency: c.MaxConcurrency,
		MaxRetries:     retries,
		Retry:          engine.RetryPolicy{Base: c.RetryBase, Factor: c.RetryFactor, Cap: c.RetryCap, Jitter: c.RetryJitter},
		Alarms:         engine.Alarms{Depth: c.AlarmDepth, DeadLetters: c.AlarmDLQ, Lag: c.AlarmLag},
		PollInterval:   c.PollInterval,
		OrderLimit:     store.OrderLimit{Max: c.OrdersPerHour, Window: time.Hour},
	}
}

// providers builds the simulator (always on, its servers kept in st) and the real
// clouds whose tokens are set.
func (c queueConfig) providers(log *slog.Logger, st cloud.SimStore) (map[string]engine.Provider, error) {
	lo, hi, err := cloud.ParseLatency(c.SimLatency)
	if err != nil {
		return nil, err
	}
	sim, err := cloud.OpenSim(cloud.SimConfig{LatencyMin: lo, LatencyMax: hi, FailRate: c.SimFailRate}, st)
	if err != nil {
		return nil, err
	}
	out := map[string]engine.Provider{"sim": sim}
	if c.LinodeToken != "" {
		p, err := cloud.NewLinode(c.LinodeToken, c.LinodeAPI, nil)
		if err != nil {
			return nil, err
		}
		p.SetSettle(c.CreateSettle)
		out["linode"] = p
	}
	if c.VultrKey != "" {
		p, err := cloud.NewVultr(c.VultrKey, c.VultrAPI, nil)
		if err != nil {
			return nil, err
		}
		p.SetSettle(c.CreateSettle)
		out["vultr"] = p
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	log.Info("cloud providers", "enabled", names, "sim_latency", c.SimLatency, "sim_fail_rate", c.SimFailRate)
	return out, nil
}

func (c queueConfig) catalog() (*catalog.Catalog, error) { return catalog.Load(c.Plans) }

// openVault opens the keys root passwords are sealed with (DATA_DIR/secrets). The old
// password.key, from which every password could be recomputed, is read only when it
// exists, and only for orders created before the vault; it is never created again.
func openVault(dataDir string, st engine.VaultStore, log *slog.Logger) (*engine.Vault, error) {
	legacy, err := os.ReadFile(filepath.Join(dataDir, "password.key"))
	switch {
	case errors.Is(err, os.ErrNotExist):
		legacy = nil
	case err != nil:
		return nil, fmt.Errorf("password key: %w", err)
	default:
		log.Warn("password.key is still present: it derives the passwords of orders created before this version; delete it once none of them is pending or provisioning")
	}
	return engine.OpenVault(filepath.Join(dataDir, "secrets"), st, legacy)
}
