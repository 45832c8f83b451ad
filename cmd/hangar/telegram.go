package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/telegram"
	"github.com/hangarhq/hangar/store"
)

// Telegram delivers webhooks only over HTTPS, and only to these ports.
var webhookPorts = map[string]bool{"443": true, "80": true, "88": true, "8443": true}

const telegramUsage = `Usage: hangar telegram setup --url URL [--drop-pending]
       hangar telegram info
       hangar telegram delete [--drop-pending]

Connects the bot to hangar (HANGAR_BOT_TOKEN, HANGAR_TELEGRAM_API):
  setup   setWebhook: Telegram posts updates to URL (https, port 443, 80, 88 or 8443,
          path /webhook) with HANGAR_WEBHOOK_SECRET as its secret token, only the update
          types hangar handles; also publishes the bot's command menu
  info    getWebhookInfo: where Telegram delivers, how many updates wait, and its last
          delivery error (the first thing to check when the bot is silent)
  delete  deleteWebhook: back to getUpdates (hangar serve --telegram-mode polling)
`

// runTelegram is `hangar telegram`.
func runTelegram(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Print(telegramUsage + "\n" + pressUsage)
		if len(args) == 0 {
			return errors.New("give setup, info, delete, send, outbox or press")
		}
		return nil
	}
	switch args[0] {
	case "send", "outbox", "press": // the offline bot (telegram_press.go)
		return runTelegramOffline(args[0], args[1:])
	}
	fs := flag.NewFlagSet("telegram "+args[0], flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	fs.Usage = func() { fmt.Fprint(fs.Output(), telegramUsage+"\nFlags:\n"); fs.PrintDefaults() }
	f := &envFlags{fs: fs}
	var token, api, secret, hook string
	var dropPending bool
	f.Secret(&token, "bot-token", "HANGAR_BOT_TOKEN", "Telegram bot token")
	f.String(&api, "telegram-api", "HANGAR_TELEGRAM_API", telegram.DefaultAPI, "Bot API base URL")
	f.Secret(&secret, "webhook-secret", "HANGAR_WEBHOOK_SECRET", "the secret token Telegram sends with every update")
	fs.StringVar(&hook, "url", "", "setup: the public HTTPS URL of hangar's /webhook")
	fs.BoolVar(&dropPending, "drop-pending", false, "discard the updates waiting at Telegram")
	if err := parseArgs(fs, args[1:], os.Stdout, os.Stderr); err != nil {
		return err
	}
	if len(f.errs) > 0 {
		return errors.Join(f.errs...)
	}
	admin, err := telegram.NewAdmin(token, api)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch args[0] {
	case "setup":
		if err := checkWebhookURL(hook); err != nil {
			return err
		}
		if !telegramSecretRE.MatchString(secret) {
			return errors.New("HANGAR_WEBHOOK_SECRET must be set to 1-256 characters of A-Z a-z 0-9 _ - (the same value hangar serve uses)")
		}
		if err := admin.SetWebhook(ctx, hook, secret, dropPending); err != nil {
			return fmt.Errorf("setWebhook: %w", err)
		}
		if err := admin.SetCommands(ctx); err != nil {
			return fmt.Errorf("setMyCommands: %w", err)
		}
		fmt.Printf("Telegram now posts updates (%s) to %s with the webhook secret.\nThe bot's command menu is set.\n", strings.Join(telegram.AllowedUpdates, ", "), hook)
		return nil
	case "info":
		info, err := admin.WebhookInfo(ctx)
		if err != nil {
			return fmt.Errorf("getWebhookInfo: %w", err)
		}
		fmt.Print(describeWebhook(info, time.Now()))
		return nil
	case "delete":
		if err := admin.DeleteWebhook(ctx, dropPending); err != nil {
			return fmt.Errorf("deleteWebhook: %w", err)
		}
		fmt.Println("The webhook is removed: Telegram keeps updates for getUpdates (hangar serve --telegram-mode polling).")
		return nil
	}
	fs.Usage()
	return fmt.Errorf("unknown telegram command %q", args[0])
}

// checkWebhookURL refuses what Telegram would refuse or never deliver to.
func checkWebhookURL(raw string) error {
	if raw == "" {
		return errors.New("give --url https://your.domain/webhook")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("--url: %w", err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("--url %s: Telegram delivers only to https:// URLs (put Caddy or nginx with a certificate in front of hangar: see deploy/)", raw)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	if !webhookPorts[port] {
		return fmt.Errorf("--url %s: Telegram delivers only to ports 443, 80, 88 or 8443", raw)
	}
	if host, _, _ := net.SplitHostPort(u.Host + ":" + port); net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("--url %s: Telegram cannot reach a loopback address; use polling (--telegram-mode polling) on a machine without a public address", raw)
	}
	if !strings.HasSuffix(u.Path, "/webhook") {
		return fmt.Errorf("--url %s: hangar takes updates at /webhook; give a URL ending in /webhook", raw)
	}
	return nil
}

// describeWebhook puts getWebhookInfo in words.
func describeWebhook(info telegram.WebhookInfo, now time.Time) string {
	var b strings.Builder
	if info.URL == "" {
		b.WriteString("No webhook is set: Telegram keeps updates for getUpdates (hangar serve --telegram-mode polling).\n")
	} else {
		fmt.Fprintf(&b, "Webhook: %s\n", info.URL)
	}
	fmt.Fprintf(&b, "Updates waiting at Telegram: %d\n", info.PendingUpdates)
	if len(info.AllowedUpdates) > 0 {
		fmt.Fprintf(&b, "Update types asked for: %s\n", strings.Join(info.AllowedUpdates, ", "))
	}
	if info.LastError == "" {
		b.WriteString("Last delivery error: none\n")
	} else {
		fmt.Fprintf(&b, "Last delivery error: %s ago (%s): %s\n", humanAgo(now.Sub(info.LastErrorAt)), info.LastErrorAt.UTC().Format(time.RFC3339), info.LastError)
		if info.RecentError(now, 10*time.Minute) {
			b.WriteString("Telegram could not deliver recently: check that hangar answers at that URL (TLS certificate, secret, /health).\n")
		}
	}
	return b.String()
}

func humanAgo(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d seconds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// startPolling runs long polling when --telegram-mode is polling. It refuses while a
// webhook is set: Telegram would refuse getUpdates, and the operator should choose.
func startPolling(ctx context.Context, cfg serveConfig, st *store.Store, eng *engine.Engine, log *slog.Logger) error {
	if cfg.TelegramMode != "polling" {
		return nil
	}
	admin, err := telegram.NewAdmin(cfg.BotToken, cfg.TelegramAPI)
	if err != nil {
		return fmt.Errorf("--telegram-mode polling: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	info, err := admin.WebhookInfo(cctx)
	cancel()
	if err != nil {
		return fmt.Errorf("--telegram-mode polling: getWebhookInfo: %w", err)
	}
	if info.URL != "" {
		return fmt.Errorf("--telegram-mode polling: a webhook is set (%s), so Telegram will not answer getUpdates; remove it with `hangar telegram delete`, or run with --telegram-mode webhook", info.URL)
	}
	p := engine.NewPoller(admin, st, eng, log)
	go func() {
		if err := p.Run(ctx); err != nil {
			log.Error("long polling stopped", "err", err)
		}
	}()
	return nil
}

// watchWebhook asks Telegram how the webhook fares every cfg.TelegramCheckEvery (in
// webhook mode with a bot token) and hands the answer to the engine, for
// /admin/health, the queue's snapshots and the console's overview. A new delivery
// error is logged once.
func watchWebhook(ctx context.Context, cfg serveConfig, eng *engine.Engine, log *slog.Logger) {
	if cfg.TelegramMode != "webhook" || cfg.BotToken == "" || cfg.TelegramCheckEvery <= 0 {
		return
	}
	admin, err := telegram.NewAdmin(cfg.BotToken, cfg.TelegramAPI)
	if err != nil {
		log.Warn("cannot watch the webhook", "err", err)
		return
	}
	var last engine.WebhookState
	check := func() {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		info, err := admin.WebhookInfo(cctx)
		cancel()
		now := time.Now()
		if err != nil {
			last.CheckedAt, last.CheckError = now, err.Error()
			eng.SetWebhookState(last)
			return
		}
		st := engine.WebhookState{URL: info.URL, PendingUpdates: info.PendingUpdates, LastError: info.LastError,
			LastErrorAt: info.LastErrorAt, CheckedAt: now}
		if st.LastError != "" && !st.LastErrorAt.Equal(last.LastErrorAt) && now.Sub(st.LastErrorAt) < engine.WebhookErrorRecent {
			log.Warn("Telegram could not deliver to the webhook", "url", st.URL, "error", st.LastError,
				"at", st.LastErrorAt.UTC().Format(time.RFC3339), "pending_updates", st.PendingUpdates)
		}
		if st.URL == "" {
			log.Warn("no webhook is set at Telegram: updates wait there; run hangar telegram setup --url, or serve with --telegram-mode polling")
		}
		last = st
		eng.SetWebhookState(st)
	}
	check()
	t := time.NewTicker(cfg.TelegramCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			check()
		}
	}
}
