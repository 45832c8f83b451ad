package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/telegram"
	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/store"
)

type serveConfig struct {
	DataDir        string
	HTTPAddr       string
	SSHAddr        string
	WebhookSecret  string
	AdminToken     string
	BotToken       string
	TelegramAPI    string
	AdminChatID    int64
	RateLimit      int
	RateWindow     time.Duration
	MaxBody        int
	SyncWrites     bool
	LogLevel       string
	MemoryLimit    int
	MaxPending     int
	LogFormat      string
	Blog           blogConfig
	Queue          queueConfig
	AuthorizedKeys string
	Demo           bool
}

func parseServeFlags(args []string) (serveConfig, error) { return parseServeFlagsTo(args, os.Stderr) }

// parseServeFlagsTo parses with usage and errors written to out.
func parseServeFlagsTo(args []string, out io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	f := &envFlags{fs: fs}
	f.String(&c.DataDir, "data", "HANGAR_DATA_DIR", "./data", "data directory: the Badger store and the SSH host key")
	f.String(&c.HTTPAddr, "http", "HANGAR_HTTP_ADDR", "127.0.0.1:8080", "HTTP listen address")
	f.String(&c.SSHAddr, "ssh", "HANGAR_SSH_ADDR", "127.0.0.1:2222", "SSH console listen address")
	f.Secret(&c.WebhookSecret, "webhook-secret", "HANGAR_WEBHOOK_SECRET", "Telegram secret token, also the /orders, /provision and /status bearer; unset refuses them all")
	f.Secret(&c.AdminToken, "admin-token", "HANGAR_ADMIN_TOKEN", "admin API and console bearer token; unset refuses the admin API")
	f.Secret(&c.BotToken, "bot-token", "HANGAR_BOT_TOKEN", "Telegram bot token; unset switches sending off (messages go to the log and the outbox view)")
	f.String(&c.TelegramAPI, "telegram-api", "HANGAR_TELEGRAM_API", telegram.DefaultAPI, "Telegram Bot API base URL")
	f.Int64(&c.AdminChatID, "admin-chat", "HANGAR_ADMIN_CHAT_ID", 0, "Telegram chat that receives admin notifications (0: none)")
	f.Int(&c.RateLimit, "rate-limit", "HANGAR_RATE_LIMIT", 30, "messages per user per window")
	f.Duration(&c.RateWindow, "rate-window", "HANGAR_RATE_WINDOW", time.Minute, "rate-limit window")
	f.Size(&c.MaxBody, "max-body", "HANGAR_MAX_BODY", "1MiB", "largest request body; larger gets 413")
	f.Bool(&c.SyncWrites, "sync-writes", "HANGAR_SYNC_WRITES", true, "fdatasync the write-ahead log before acknowledging a write (concurrent commits share one); false trades power-loss durability for speed")
	f.Int(&c.MaxPending, "max-pending", "HANGAR_MAX_PENDING", 50000, "updates waiting for processing before /webhook answers 503 (Telegram re-delivers)")
	f.Size(&c.MemoryLimit, "memory-limit", "HANGAR_MEMORY_LIMIT", "256MiB", "soft memory limit for the Go runtime (GOMEMLIMIT); the GC works harder near it")
	f.String(&c.LogLevel, "log-level", "HANGAR_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	f.String(&c.LogFormat, "log-format", "HANGAR_LOG_FORMAT", "text", "log format: text or json")
	addBlogFlags(f, &c.Blog)
	addQueueFlags(f, &c.Queue)
	f.Bool(&c.Demo, "demo", "HANGAR_DEMO", false, "generate synthetic bot updates, orders and blog views against this daemon's own API (for trying the console)")
	f.String(&c.AuthorizedKeys, "authorized-keys", "HANGAR_AUTHORIZED_KEYS", "", "OpenSSH authorized_keys file of console operators (default DATA_DIR/authorized_keys)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar serve [flags]\n\nRuns the daemon. Every flag is also an environment variable; flags win.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if len(f.errs) > 0 {
		return c, errors.Join(f.errs...)
	}
	return c, c.validate()
}

var telegramSecretRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

func (c serveConfig) validate() error {
	var errs []error
	if c.WebhookSecret != "" && !telegramSecretRE.MatchString(c.WebhookSecret) {
		errs = append(errs, errors.New("--webhook-secret must be 1-256 characters of A-Z a-z 0-9 _ - (Telegram's rule)"))
	}
	if c.RateLimit < 1 {
		errs = append(errs, errors.New("--rate-limit must be at least 1"))
	}
	if c.RateWindow < time.Second {
		errs = append(errs, errors.New("--rate-window must be at least 1s"))
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		errs = append(errs, errors.New("--admin-token must be at least 16 characters"))
	}
	errs = append(errs, c.Blog.validate())
	errs = append(errs, c.Queue.validate())
	return errors.Join(errs...)
}

func newLogger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

func runServe(args []string) error {
	cfg, err := parseServeFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(cfg.MemoryLimit))
	}
	log.Info("scheduler", "gomaxprocs", store.TuneProcs(), "cpus", runtime.NumCPU())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, log)
}

// serve runs hangar until ctx ends, then shuts down in order: stop taking requests,
// let the actors finish their mailboxes, close the store.
func serve(ctx context.Context, cfg serveConfig, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	dbDir := filepath.Join(cfg.DataDir, "db")
	st, err := store.Open(store.Options{Dir: dbDir, SyncWrites: cfg.SyncWrites, Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := seedViews(st, cfg.Blog.SeedViews, log); err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerStoreMetrics(reg, st)

	var sender engine.Sender = telegram.Off{}
	if cfg.BotToken != "" {
		c, err := telegram.New(cfg.BotToken, cfg.TelegramAPI)
		if err != nil {
			return err
		}
		sender = c
	} else {
		log.Warn("no bot token: Telegram sending is off; replies go to the log and the console's outbox view")
	}
	if cfg.WebhookSecret == "" {
		log.Warn("no webhook secret: /webhook refuses every update until HANGAR_WEBHOOK_SECRET is set")
	}
	if cfg.AdminToken == "" {
		log.Warn("no admin token: the admin API refuses every request until HANGAR_ADMIN_TOKEN is set")
	}

	providers, err := cfg.Queue.providers(log, st)
	if err != nil {
		return err
	}
	plans, err := cfg.Queue.catalog()
	if err != nil {
		return err
	}
	pwKey, err := passwordKey(cfg.DataDir)
	if err != nil {
		return err
	}
	eng, err := engine.New(engine.Config{
		RateLimit: cfg.RateLimit, RateWindow: cfg.RateWindow, MaxPending: cfg.MaxPending, Logger: log, Registry: reg,
		Queue: cfg.Queue.engineConfig(), Providers: providers, Catalog: plans,
		Password: engine.NewPasswordDeriver(pwKey), AdminChatID: cfg.AdminChatID,
	}, st, sender)
	if err != nil {
		return err
	}
	if err := eng.Start(); err != nil {
		return err
	}

	srv := hangarhttp.New(hangarhttp.Config{
		WebhookSecret: cfg.WebhookSecret, AdminToken: cfg.AdminToken, MaxBody: cfg.MaxBody,
		Logger: log, Registry: reg, Blog: cfg.Blog.http(),
		RateLimit: cfg.RateLimit, RateWindow: cfg.RateWindow, Sending: sender.Enabled(),
	}, hangarhttp.Deps{Updates: eng, RateLimits: eng, Health: eng, Store: st, Blog: st, Orders: eng, Balances: st, Inspector: st})

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		eng.Stop(context.Background())
		return fmt.Errorf("http listen: %w", err)
	}
	sshServer, err := startConsoleSSH(cfg, ln.Addr(), log)
	if err != nil {
		ln.Close()
		eng.Stop(context.Background())
		return err
	}
	log.Info("hangar serving", "http", ln.Addr().String(), "data", cfg.DataDir,
		"rate_limit", cfg.RateLimit, "rate_window", cfg.RateWindow, "telegram", sender.Enabled())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if cfg.Demo {
		go runDemo(ctx, cfg, ln.Addr(), log)
	}

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-errc:
		log.Error("http server stopped", "err", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if sshServer != nil {
		_ = sshServer.Shutdown(shutdownCtx)
	}
	_ = srv.Shutdown(shutdownCtx)
	eng.Stop(shutdownCtx)
	log.Info("stopped")
	return err
}

// registerStoreMetrics exports the write-ahead log's counters: commits per fdatasync
// is the figure group commit is judged by.
func registerStoreMetrics(reg prometheus.Registerer, st *store.Store) {
	counter := func(name, help string, read func(store.LogStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return read(st.LogStats()) })
	}
	reg.MustRegister(
		counter("hangar_store_log_commits_total", "Commits appended to the write-ahead log.",
			func(s store.LogStats) float64 { return float64(s.Commits) }),
		counter("hangar_store_log_syncs_total", "fdatasyncs of the write-ahead log; each covers every commit appended meanwhile.",
			func(s store.LogStats) float64 { return float64(s.Syncs) }),
		counter("hangar_store_log_sync_seconds_total", "Time spent in fdatasync of the write-ahead log.",
			func(s store.LogStats) float64 { return s.SyncTime.Seconds() }),
		counter("hangar_store_log_bytes_total", "Bytes written to the write-ahead log.",
			func(s store.LogStats) float64 { return float64(s.Bytes) }),
		counter("hangar_store_applied_entries_total", "Entries written to Badger behind the log (repeats of a key within a batch once).",
			func(s store.LogStats) float64 { return float64(s.Applied) }),
		counter("hangar_store_elided_deletes_total", "Deletes that never reached Badger: their key was new and deleted before Badger had it.",
			func(s store.LogStats) float64 { return float64(s.Elided) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hangar_store_overlay_entries", Help: "Entries held in memory in front of Badger: not yet applied, or cached."},
			func() float64 { return float64(st.LogStats().Overlay) }),
		commitLatency{st: st,
			queue: prometheus.NewDesc("hangar_store_commit_queue_seconds",
				"Time a commit waited for the committer, which runs commits one at a time.", nil, nil),
			durable: prometheus.NewDesc("hangar_store_commit_durable_seconds",
				"Time from a commit's end to its caller hearing it is durable: the wait for the fdatasync covering it, the sync, the wake-up.", nil, nil),
			sync: prometheus.NewDesc("hangar_store_log_sync_duration_seconds",
				"Each fdatasync of the write-ahead log.", nil, nil),
		},
	)
}

// commitLatency exports the store's commit-wait histograms as they are: the store
// counts them itself, lock-free, on every commit.
type commitLatency struct {
	st                   *store.Store
	queue, durable, sync *prometheus.Desc
}

func (c commitLatency) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queue
	ch <- c.durable
	ch <- c.sync
}

func (c commitLatency) Collect(ch chan<- prometheus.Metric) {
	s := c.st.LogStats()
	for desc, h := range map[*prometheus.Desc]store.LatencyHist{c.queue: s.CommitQueue, c.durable: s.CommitDurable, c.sync: s.SyncDurations} {
		buckets := make(map[float64]uint64, len(h.Counts)-1)
		var cum uint64
		for i, n := range h.Counts[:len(h.Counts)-1] {
			cum += uint64(n)
			buckets[store.LatencyBound(i).Seconds()] = cum
		}
		ch <- prometheus.MustNewConstHistogram(desc, uint64(h.Count()), h.Sum.Seconds(), buckets)
	}
}
