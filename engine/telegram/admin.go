package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// AllowedUpdates are the update types hangar handles: what setWebhook and getUpdates
// ask Telegram for, so that nothing else is delivered (or counted against the bot).
var AllowedUpdates = []string{"message", "callback_query", "pre_checkout_query"}

// Commands is the bot's command list as Telegram shows it in the chat's menu.
var Commands = []models.BotCommand{
	{Command: "plans", Description: "Plans, regions and prices"},
	{Command: "order", Description: "Order a server: /order <plan> <region>"},
	{Command: "servers", Description: "Your servers"},
	{Command: "status", Description: "An order's status: /status <id>"},
	{Command: "balance", Description: "Your balance"},
	{Command: "topup", Description: "Top up with Telegram Stars: /topup <amount>"},
	{Command: "language", Description: "한국어 / English: /language ko|en"},
	{Command: "cancel", Description: "Cancel an order that has not started: /cancel <id>"},
	{Command: "terminate", Description: "Delete a server: /terminate <id>"},
	{Command: "renew", Description: "Pay a server's next period now: /renew <id>"},
	{Command: "autorenew", Description: "Renew a server by itself or not: /autorenew <id> on|off"},
	{Command: "topup", Description: "Top up your balance with Telegram Stars: /topup <amount>"},
	{Command: "password", Description: "A new server's root password again: /password <id>"},
	{Command: "sshkey", Description: "Create servers with your SSH key: /sshkey <public key>"},
	{Command: "language", Description: "Answer in Korean or English: /language ko|en"},
	{Command: "help", Description: "What this bot does"},
}

// Admin sets up how Telegram reaches hangar: the webhook, the command list, and
// long polling. It is used by `hangar telegram` and by polling mode, never on the
// path of an update.
type Admin struct {
	bot   *tgbot.Bot
	base  string
	token string
	http  *http.Client
}

// NewAdmin returns an Admin for the Bot API at baseURL.
func NewAdmin(token, baseURL string) (*Admin, error) {
	if token == "" {
		return nil, errors.New("telegram: no bot token (set HANGAR_BOT_TOKEN or --bot-token)")
	}
	if baseURL == "" {
		baseURL = DefaultAPI
	}
	baseURL = strings.TrimRight(baseURL, "/")
	b, err := tgbot.New(token,
		tgbot.WithServerURL(baseURL),
		tgbot.WithSkipGetMe(),
		tgbot.WithHTTPClient(time.Minute, &http.Client{Timeout: 30 * time.Second}),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return &Admin{bot: b, base: baseURL, token: token, http: &http.Client{Timeout: 90 * time.Second}}, nil
}

// WebhookInfo is Telegram's view of the webhook: where it delivers, how much waits,
// and the last delivery error.
type WebhookInfo struct {
	URL            string    `json:"url"`
	PendingUpdates int       `json:"pending_update_count"`
	LastError      string    `json:"last_error_message,omitempty"`
	LastErrorAt    time.Time `json:"last_error_at,omitzero"`
	MaxConnections int       `json:"max_connections,omitempty"`
	AllowedUpdates []string  `json:"allowed_updates,omitempty"`
	IPAddress      string    `json:"ip_address,omitempty"`
}

// RecentError reports whether Telegram failed to deliver within d before now.
func (w WebhookInfo) RecentError(now time.Time, d time.Duration) bool {
	return w.LastError != "" && now.Sub(w.LastErrorAt) < d
}

// SetWebhook points Telegram at url with secret as X-Telegram-Bot-Api-Secret-Token,
// asking only for AllowedUpdates; dropPending discards updates waiting at Telegram.
func (a *Admin) SetWebhook(ctx context.Context, url, secret string, dropPending bool) error {
	_, err := a.bot.SetWebhook(ctx, &tgbot.SetWebhookParams{
		URL: url, SecretToken: secret, AllowedUpdates: AllowedUpdates, DropPendingUpdates: dropPending,
	})
	return a.scrub(err)
}

// DeleteWebhook stops webhook delivery (updates then wait for getUpdates).
func (a *Admin) DeleteWebhook(ctx context.Context, dropPending bool) error {
	_, err := a.bot.DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{DropPendingUpdates: dropPending})
	return a.scrub(err)
}

// SetCommands publishes Commands as the bot's menu.
func (a *Admin) SetCommands(ctx context.Context) error {
	_, err := a.bot.SetMyCommands(ctx, &tgbot.SetMyCommandsParams{Commands: Commands})
	return a.scrub(err)
}

// WebhookInfo asks Telegram for the webhook's state.
func (a *Admin) WebhookInfo(ctx context.Context) (WebhookInfo, error) {
	info, err := a.bot.GetWebhookInfo(ctx)
	if err != nil {
		return WebhookInfo{}, a.scrub(err)
	}
	out := WebhookInfo{URL: info.URL, PendingUpdates: info.PendingUpdateCount, LastError: info.LastErrorMessage,
		MaxConnections: info.MaxConnections, AllowedUpdates: info.AllowedUpdates, IPAddress: info.IPAddress}
	if info.LastErrorDate > 0 {
		out.LastErrorAt = time.Unix(int64(info.LastErrorDate), 0)
	}
	return out, nil
}

// ErrWebhookActive is getUpdates refused because a webhook is set.
var ErrWebhookActive = errors.New("telegram: a webhook is set, so Telegram refuses getUpdates")

// GetUpdates long-polls for updates from offset on, waiting up to timeout; each update
// comes back as Telegram sent it, to be stored as the webhook stores its bodies.
func (a *Admin) GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"offset": offset, "timeout": int(timeout / time.Second), "allowed_updates": AllowedUpdates})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/bot"+a.token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, a.scrub(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, a.scrub(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, a.scrub(err)
	}
	var out struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("telegram: getUpdates answered %s with no JSON", resp.Status)
	}
	switch {
	case out.OK:
		return out.Result, nil
	case out.ErrorCode == http.StatusConflict:
		return nil, fmt.Errorf("%w (%s)", ErrWebhookActive, a.scrubText(out.Description))
	case out.ErrorCode == http.StatusTooManyRequests:
		return nil, &Error{err: fmt.Errorf("telegram: getUpdates: %s", a.scrubText(out.Description)), retryAfter: time.Duration(out.Parameters.RetryAfter) * time.Second}
	}
	return nil, &Error{err: fmt.Errorf("telegram: getUpdates: %d %s", out.ErrorCode, a.scrubText(out.Description)),
		permanent: out.ErrorCode == http.StatusUnauthorized || out.ErrorCode == http.StatusNotFound}
}

func (a *Admin) scrubText(s string) string { return strings.ReplaceAll(s, a.token, "***") }

func (a *Admin) scrub(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(a.scrubText(err.Error()))
}
