package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/hangarhq/hangar/store"
)

// DefaultAPI is the public Bot API.
const DefaultAPI = "https://api.telegram.org"

// Client sends messages with a bot token.
type Client struct {
	bot   *tgbot.Bot
	token string
}

// New returns a client for the Bot API at baseURL.
func New(token, baseURL string) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultAPI
	}
	b, err := tgbot.New(token,
		tgbot.WithServerURL(strings.TrimRight(baseURL, "/")),
		tgbot.WithSkipGetMe(),
		tgbot.WithHTTPClient(time.Minute, &http.Client{Timeout: 20 * time.Second}),
		tgbot.WithNotAsyncHandlers(),
	)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return &Client{bot: b, token: token}, nil
}

// Username is the bot's own @username (getMe), for telling commands addressed to it
// from those for another bot in a group.
func (c *Client) Username(ctx context.Context) (string, error) {
	me, err := c.bot.GetMe(ctx)
	if err != nil {
		return "", c.classify(err)
	}
	return me.Username, nil
}

// Enabled is always true for a client with a token.
func (c *Client) Enabled() bool { return true }

// Send delivers one message.
func (c *Client) Send(ctx context.Context, m store.OutboxMessage) error {
	p := &tgbot.SendMessageParams{ChatID: m.ChatID, Text: m.Text, ParseMode: models.ParseMode(m.ParseMode)}
	if len(m.ReplyMarkup) > 0 {
		// Our own Keyboard, not models.InlineKeyboardMarkup: see Button.
		kb, err := ParseMarkup(m.ReplyMarkup)
		if err != nil {
			return &Error{err: err, permanent: true}
		}
		p.ReplyMarkup = kb
	}
	_, err := c.bot.SendMessage(ctx, p)
	return c.classify(err)
}

// AnswerCallback acknowledges a callback query so the user's button stops spinning.
func (c *Client) AnswerCallback(ctx context.Context, id, text string) error {
	_, err := c.bot.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text})
	return c.classify(err)
}

func (c *Client) classify(err error) error {
	if err == nil {
		return nil
	}
	// go-telegram/bot already masks the token in URLs; mask it anywhere else too.
	msg := strings.ReplaceAll(err.Error(), c.token, "***")
	var tooMany *tgbot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return &Error{err: errors.New(msg), retryAfter: time.Duration(tooMany.RetryAfter) * time.Second}
	}
	permanent := errors.Is(err, tgbot.ErrorBadRequest) || errors.Is(err, tgbot.ErrorForbidden) ||
		errors.Is(err, tgbot.ErrorUnauthorized) || errors.Is(err, tgbot.ErrorNotFound)
	return &Error{err: errors.New(msg), permanent: permanent}
}

// Error is a send failure with the facts the outbox needs to decide what to do.
type Error struct {
	err        error
	retryAfter time.Duration
	permanent  bool
}

func (e *Error) Error() string { return e.err.Error() }

// RetryAfter is Telegram's retry_after for a 429, zero otherwise.
func (e *Error) RetryAfter() time.Duration { return e.retryAfter }

// Permanent reports a refusal that retrying cannot fix (400, 401, 403, 404).
func (e *Error) Permanent() bool { return e.permanent }

// Off is the sender used without a bot token: it sends nothing.
type Off struct{}

// Enabled is false: the engine logs the message and shows it in the console's outbox.
func (Off) Enabled() bool { return false }

// AnswerCallback is never called for a disabled sender; it refuses if it is.
func (Off) AnswerCallback(context.Context, string, string) error {
	return &Error{err: errors.New("telegram sending is off (no bot token)"), permanent: true}
}

// Send is never called for a disabled sender; it refuses if it is.
func (Off) Send(context.Context, store.OutboxMessage) error {
	return &Error{err: errors.New("telegram sending is off (no bot token)"), permanent: true}
}
