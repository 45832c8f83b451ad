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
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/i18n"
	"github.com/hangarhq/hangar/engine/telegram"
	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/internal/logring"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/tui"
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
	Demo           demoMode
	// Connection budget and shutdown (issue 14).
	MaxConns            int
	MaxSSHSessions      int
	SSHHandshakeTimeout time.Duration
	SSHIdleTimeout      time.Duration
	MetricsAddr         string
	ShutdownTimeout     time.Duration
	Storage             storageConfig
	Roles               roleConfig
	Broadcast           broadcastConfig
	Billing             billingConfig
	TelegramMode        string
	TelegramCheckEvery  time.Duration
	StarsRate           int64
	Language            string
}

func parseServeFlags(args []string) (serveConfig, error) {
	return parseServeFlagsTo(args, os.Stdout, os.Stderr)
}

// parseServeFlagsTo parses with the usage asked for written to out, and errors to errOut.
func parseServeFlagsTo(args []string, out io.Writer, errOut ...io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	stderr := out
	if len(errOut) > 0 {
		stderr = errOut[0]
	}
	f := &envFlags{fs: fs}
	f.String(&c.DataDir, "data", "HANGAR_DATA_DIR", "./data", "data directory: the Badger store and the SSH host key")
	f.String(&c.HTTPAddr, "http", "HANGAR_HTTP_ADDR", "127.0.0.1:8080", "HTTP listen address")
	f.String(&c.SSHAddr, "ssh", "HANGAR_SSH_ADDR", "127.0.0.1:2222", "SSH console listen address (off: no SSH console)")
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
	addStorageFlags(f, &c.Storage)
	addBroadcastFlags(f, &c.Broadcast)
	addRoleFlags(f, &c.Roles)
	addBillingFlags(f, &c.Billing)
	f.Duration(&c.TelegramCheckEvery, "telegram-check-every", "HANGAR_TELEGRAM_CHECK_EVERY", time.Minute, "in webhook mode, how often to ask Telegram how delivery fares (getWebhookInfo; shown in /admin/health and the console, with an alarm on a recent error); 0 turns it off")
	f.String(&c.TelegramMode, "telegram-mode", "HANGAR_TELEGRAM_MODE", "webhook", "how updates arrive: webhook (Telegram posts to /webhook; see hangar telegram setup) or polling (getUpdates, for a machine Telegram cannot reach; needs --bot-token)")
	f.Int64(&c.StarsRate, "stars-rate", "HANGAR_STARS_RATE", 0, "minor units of the catalogue currency per Telegram Star, for /topup (0: top-ups off)")
	f.String(&c.Language, "language", "HANGAR_LANGUAGE", "ko", "the bot's language (ko or en) for users whose Telegram client asks for neither")
	addDemoFlag(f, &c.Demo)
	f.String(&c.AuthorizedKeys, "authorized-keys", "HANGAR_AUTHORIZED_KEYS", "", "OpenSSH authorized_keys file of console operators (default DATA_DIR/authorized_keys)")
	f.Int(&c.MaxConns, "max-conns", "HANGAR_MAX_CONNS", 0, "concurrent HTTP connections; more get 503 too_many_connections (0: three quarters of the descriptors left after a reserve, from RLIMIT_NOFILE)")
	f.Int(&c.MaxSSHSessions, "max-ssh-sessions", "HANGAR_MAX_SSH_SESSIONS", 0, "concurrent SSH console connections; more are closed (0: derived from RLIMIT_NOFILE, at most 64)")
	f.Duration(&c.SSHHandshakeTimeout, "ssh-handshake-timeout", "HANGAR_SSH_HANDSHAKE_TIMEOUT", 10*time.Second, "an SSH connection that has not authenticated by then is closed")
	f.Duration(&c.SSHIdleTimeout, "ssh-idle-timeout", "HANGAR_SSH_IDLE_TIMEOUT", 30*time.Minute, "an SSH console session with no traffic for this long is closed")
	f.String(&c.MetricsAddr, "metrics-addr", "HANGAR_METRICS_ADDR", "", "a private listener for /metrics and the detailed /health (empty: /metrics on --http, detailed health at /admin/health only)")
	f.Duration(&c.ShutdownTimeout, "shutdown-timeout", "HANGAR_SHUTDOWN_TIMEOUT", 5*time.Second, "on SIGTERM, SIGINT or SIGHUP, the time to finish requests in flight, let provider calls record their state and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar serve [flags]\n\nRuns the daemon. Every flag is also an environment variable; flags win.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, out, stderr); err != nil {
		return c, err
	}
	// An empty variable counts as unset, so the environment (a systemd
	// EnvironmentFile, the image's ENV) switches the console off with "off".
	if strings.EqualFold(c.SSHAddr, "off") || strings.EqualFold(c.SSHAddr, "none") {
		c.SSHAddr = ""
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("hangar serve takes no arguments, only flags: %q (the data directory is --data)", fs.Arg(0))
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
	if c.MaxConns < 0 || c.MaxSSHSessions < 0 {
		errs = append(errs, errors.New("--max-conns and --max-ssh-sessions must be 0 (derived) or more"))
	}
	if c.SSHHandshakeTimeout <= 0 || c.SSHIdleTimeout <= 0 {
		errs = append(errs, errors.New("--ssh-handshake-timeout and --ssh-idle-timeout must be positive"))
	}
	if c.ShutdownTimeout < time.Second {
		errs = append(errs, errors.New("--shutdown-timeout must be at least 1s"))
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.HTTPAddr {
		errs = append(errs, errors.New("--metrics-addr must differ from --http: it is the private listener"))
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		errs = append(errs, errors.New("--admin-token must be at least 16 characters"))
	}
	errs = append(errs, c.Blog.validate())
	errs = append(errs, c.Queue.validate())
	errs = append(errs, c.Storage.validate())
	errs = append(errs, c.Roles.validate(c.AdminToken))
	if c.MaxBody < 1<<10 {
		errs = append(errs, errors.New("--max-body must be at least 1KiB"))
	}
	if c.MemoryLimit < 32<<20 {
		errs = append(errs, errors.New("--memory-limit must be at least 32MiB"))
	}
	errs = append(errs, c.Broadcast.validate(), c.Billing.validate())
	if c.StarsRate < 0 {
		errs = append(errs, errors.New("--stars-rate must be 0 (top-ups off) or a positive number of minor units per star"))
	}
	if !i18n.IsSupported(c.Language) {
		errs = append(errs, fmt.Errorf("--language %q: use ko or en", c.Language))
	}
	switch {
	case c.TelegramMode != "webhook" && c.TelegramMode != "polling":
		errs = append(errs, fmt.Errorf("--telegram-mode %q: use webhook or polling", c.TelegramMode))
	case c.TelegramMode == "polling" && c.BotToken == "":
		errs = append(errs, errors.New("--telegram-mode polling needs --bot-token (HANGAR_BOT_TOKEN)"))
	}
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
	for _, u := range unknownEnv(os.Environ()) {
		if u[1] != "" {
			log.Warn("unknown environment variable: no setting reads it", "name", u[0], "did_you_mean", u[1])
		} else {
			log.Warn("unknown environment variable: no setting reads it", "name", u[0])
		}
	}
	log.Info("scheduler", "gomaxprocs", store.TuneProcs(), "cpus", runtime.NumCPU())
	cfg.connBudget(raiseFileLimit(log))
	// SIGHUP too: a terminal's hangup ended the daemon like a crash (nothing
	// acknowledged lost, but no graceful stop: a broadcast in flight repeated a message).
	stopOn := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) { // started under nohup: it stays ignored
		stopOn = append(stopOn, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopOn...)
	defer stop()
	return serve(ctx, cfg, log)
}

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard limit: every connection costs a
// descriptor, and the soft default (often 1024) is what an idle-connection flood
// exhausts first. It returns the soft limit in force afterwards (0 if unknown).
func raiseFileLimit(log *slog.Logger) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Warn("cannot read the open-file limit", "err", err)
		return 0
	}
	soft := lim.Cur
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			log.Warn("cannot raise the open-file limit", "soft", lim.Cur, "hard", lim.Max, "err", err)
		} else {
			lim = raised
		}
	}
	log.Info("open-file limit", "soft_at_start", soft, "soft", lim.Cur, "hard", lim.Max)
	return lim.Cur
}

// fdReserve are descriptors kept for everything that is not an incoming connection:
// the store's files, the log, outgoing calls to providers and Telegram.
const fdReserve = 128

// connBudget fills in the connection caps left at 0 from the open-file limit: three
// quarters of what the reserve leaves for HTTP, a sixteenth (at most 64) for the SSH
// console, so that neither flood can take the descriptors the other or the store needs.
func (c *serveConfig) connBudget(nofile uint64) {
	budget := 1024 - fdReserve
	if nofile > fdReserve {
		budget = int(min(nofile-fdReserve, 1<<20))
	}
	if c.MaxConns == 0 {
		c.MaxConns = max(16, min(budget*3/4, 100_000))
	}
	if c.MaxSSHSessions == 0 {
		c.MaxSSHSessions = max(2, min(budget/16, 64))
	}
}

// serve runs hangar until ctx ends, then shuts down within --shutdown-timeout: no new
// order attempt starts, the SSH console and the event streams close, the HTTP requests
// in flight finish, the provider calls in flight record their state, the actors finish
// their mailboxes, the store closes.
func serve(ctx context.Context, cfg serveConfig, log *slog.Logger) error {
	// The console's log pane reads the daemon's recent lines from memory, scrubbed of
	// the configured secrets before they are kept.
	logs := logring.New(logring.DefaultCapacity)
	log = slog.New(logring.Tee(log.Handler(), logs,
		logring.NewScrubber(cfg.BotToken, cfg.WebhookSecret, cfg.AdminToken, cfg.Roles.ViewerToken, cfg.Queue.LinodeToken, cfg.Queue.VultrKey)))
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	dbDir := storeDir(cfg.DataDir)
	st, err := store.Open(store.Options{Dir: dbDir, SyncWrites: cfg.SyncWrites, Logger: log, MinFreeBytes: int64(cfg.Storage.MinFree)})
	if err != nil {
		return err
	}
	defer func() {
		closing := time.Now()
		if err := st.Close(); err != nil {
			log.Error("store close", "err", err)
		}
		log.Info("store closed", "took", time.Since(closing).Round(time.Millisecond))
	}()
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
	vault, err := openVault(cfg.DataDir, st, log)
	if err != nil {
		return err
	}
	eng, err := engine.New(engine.Config{
		RateLimit: cfg.RateLimit, RateWindow: cfg.RateWindow, MaxPending: cfg.MaxPending, Logger: log, Registry: reg,
		Queue: cfg.Queue.engineConfig(), Providers: providers, Catalog: plans,
		Passwords: vault, AdminChatID: cfg.AdminChatID, StarsRate: cfg.StarsRate, Language: cfg.Language,
		SendInterval: cfg.Broadcast.sendInterval(), Broadcast: cfg.Broadcast.engineConfig(), Billing: cfg.Billing.engineConfig(),
		Reconcile: cfg.Queue.reconcileConfig(),
		Secrets: engine.SecretsConfig{PasswordWindow: cfg.Queue.PasswordWindow,
			Mask: []string{cfg.BotToken, cfg.WebhookSecret, cfg.AdminToken, cfg.Roles.ViewerToken, cfg.Queue.LinodeToken, cfg.Queue.VultrKey}},
	}, st, sender)
	if err != nil {
		return err
	}
	if err := eng.Start(); err != nil {
		return err
	}
	// Before anything can place an order (HTTP, polling, the demo): see storage.go.
	reconcileAfterRestore(ctx, st, eng, log)
	backupCtx, stopBackups := context.WithCancel(context.Background())
	defer stopBackups()
	go scheduleBackups(backupCtx, st, cfg.Storage, log)
	go watchWebhook(ctx, cfg, eng, log)
	if err := startPolling(ctx, cfg, st, eng, log); err != nil {
		eng.Stop(context.Background())
		return err
	}

	cfg.Roles.console = newConsoleToken()
	srv := hangarhttp.New(hangarhttp.Config{
		WebhookSecret: cfg.WebhookSecret, AdminToken: cfg.AdminToken, MaxBody: cfg.MaxBody,
		ViewerToken: cfg.Roles.ViewerToken, ConsoleToken: cfg.Roles.console,
		Logger: log, Registry: reg, Blog: cfg.Blog.http(),
		RateLimit: cfg.RateLimit, RateWindow: cfg.RateWindow, Sending: sender.Enabled(),
		MaxConns: cfg.MaxConns, PrivateOps: cfg.MetricsAddr != "",
	}, hangarhttp.Deps{Updates: eng, RateLimits: eng, Health: eng, Store: st, Blog: st, Orders: eng, Balances: st, Inspector: st, Backups: st,
		Reconciler: eng, Users: st, Logs: logs, Broadcasts: eng, Pause: eng, Audit: st, Payments: eng, Billing: eng})

	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		eng.Stop(context.Background())
		return fmt.Errorf("http listen: %w", err)
	}
	var opsLn net.Listener
	if cfg.MetricsAddr != "" {
		if opsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			ln.Close()
			eng.Stop(context.Background())
			return fmt.Errorf("metrics listen: %w", err)
		}
	}
	sshServer, err := startConsoleSSH(cfg, ln.Addr(), reg, log)
	if err != nil {
		ln.Close()
		if opsLn != nil {
			opsLn.Close()
		}
		eng.Stop(context.Background())
		return err
	}
	log.Info("hangar serving", "http", ln.Addr().String(), "data", cfg.DataDir,
		"rate_limit", cfg.RateLimit, "rate_window", cfg.RateWindow, "telegram", sender.Enabled(),
		"max_conns", cfg.MaxConns, "max_ssh_sessions", cfg.MaxSSHSessions)

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if opsLn != nil {
		log.Info("metrics and detailed health on a private listener", "addr", opsLn.Addr().String())
		go func() { errc <- srv.ServeOps(opsLn) }()
	}
	if cfg.Demo != demoOff {
		go runDemo(ctx, cfg, ln.Addr(), log)
	}

	select {
	case <-ctx.Done():
	case err = <-errc:
		log.Error("http server stopped", "err", err)
	}
	shutdown(cfg.ShutdownTimeout, eng, srv, sshServer, log)
	return err
}

// shutdown stops hangar within budget, in the order that loses nothing acknowledged:
// no new attempts first (the dispatcher would otherwise start orders only to cut them
// off), then the connections that never end by themselves (SSH sessions, event
// streams), then the HTTP requests in flight, then the engine. The store is closed by
// the caller. Each step says what it waits for.
func shutdown(budget time.Duration, eng *engine.Engine, srv *hangarhttp.Server, sshServer *tui.SSHServer, log *slog.Logger) {
	start := time.Now()
	eng.StopStarting()
	log.Info("shutting down", "budget", budget)
	if sshServer != nil {
		if n := sshServer.Sessions(); n > 0 {
			log.Info("closing SSH console sessions", "sessions", n)
		}
		_ = sshServer.Close()
	}
	// HTTP gets at most two fifths of the budget: a request still running then is cut
	// off (its work is either durable already or never acknowledged); the engine has
	// until seven tenths for its provider calls and mailboxes, and the store the rest
	// to close (Badger flushes its memtable).
	httpCtx, cancelHTTP := context.WithDeadline(context.Background(), start.Add(budget*2/5))
	if n := srv.OpenConns(); n > 0 {
		log.Info("waiting for HTTP requests in flight", "open_connections", n)
	}
	if err := srv.Shutdown(httpCtx); err != nil {
		log.Warn("HTTP requests still open at their shutdown deadline were cut off", "open_connections", srv.OpenConns(), "err", err)
	}
	cancelHTTP()
	engCtx, cancelEng := context.WithDeadline(context.Background(), start.Add(budget*7/10))
	eng.Stop(engCtx)
	cancelEng()
	log.Info("stopped", "took", time.Since(start).Round(time.Millisecond))
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
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hangar_store_disk_free_bytes", Help: "Free space of the data directory's filesystem at the last reading (-1: unknown)."},
			func() float64 { return float64(st.Storage().FreeBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hangar_store_disk_floor_bytes", Help: "The free-space floor (--min-free-disk): below it writes are refused."},
			func() float64 { return float64(st.Storage().MinFreeBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "hangar_store_writes_refused", Help: "1 while the store refuses writes (disk below the floor, or the log cannot write), else 0. Alert on it."},
			func() float64 {
				if st.Storage().Refusing != "" {
					return 1
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "hangar_store_log_failed_writes_total", Help: "Writes or syncs of the write-ahead log that failed (each refused its commits; the log then recovered in a fresh segment)."},
			func() float64 { return float64(st.Storage().FailedWrites) }),
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
