package api

import (
	"fmt"
	"time"
)

// Order statuses, in the order the console cycles through them when filtering.
var Statuses = []string{"pending", "provisioning", "active", "suspended", "failed", "cancelled", "terminated"}

// QueueStats is GET /admin/queue and the payload of a snapshot event.
type QueueStats struct {
	At             time.Time  `json:"at"`
	Depth          int64      `json:"depth"`
	Pending        int64      `json:"pending"`
	WaitingRetry   int64      `json:"waiting_retry"`
	InFlight       int64      `json:"in_flight"`
	MaxConcurrency int64      `json:"max_concurrency"`
	Enqueued       int64      `json:"enqueued"`
	Started        int64      `json:"started"`
	Retried        int64      `json:"retried"`
	Succeeded      int64      `json:"succeeded"`
	DeadLettered   int64      `json:"dead_lettered"`
	DeadLetters    int64      `json:"dead_letters"`
	LagSeconds     float64    `json:"lag_seconds"`
	Alarms         Alarms     `json:"alarms"`
	Thresholds     Thresholds `json:"thresholds"`
	// Disk is the data directory's disk (nil from a daemon that does not report it).
	Disk *Disk `json:"disk,omitempty"`
	// Paused: an operator has paused provisioning since PausedSince; orders are
	// accepted and wait.
	Paused      bool       `json:"paused"`
	PausedSince *time.Time `json:"paused_since,omitempty"`
	// Telegram is Telegram's view of the webhook, checked every minute in webhook mode.
	Telegram *TelegramWebhook `json:"telegram,omitempty"`
}

// Disk is the state of the disk under the store: below the floor, writes are refused.
type Disk struct {
	FreeBytes  int64  `json:"free_bytes"` // -1: unknown
	FloorBytes int64  `json:"floor_bytes"`
	Refusing   string `json:"refusing,omitempty"` // why writes are refused now
}

// Alarms says which thresholds the daemon considers crossed; the console colours by
// these rather than recomputing, so operators see exactly what the daemon alerts on.
type Alarms struct {
	Depth       bool `json:"depth"`
	DeadLetters bool `json:"dead_letters"`
	Lag         bool `json:"lag"`
	Disk        bool `json:"disk"`
	Telegram    bool `json:"telegram"` // Telegram reported a delivery error in the last 10 minutes
}

type Thresholds struct {
	Depth       int64   `json:"depth"`
	DeadLetters int64   `json:"dead_letters"`
	LagSeconds  float64 `json:"lag_seconds"`
}

// Order is an order as the admin API shows it; nullable fields are pointers.
type Order struct {
	OrderID        int64          `json:"order_id"`
	UserID         int64          `json:"user_id"`
	TelegramUserID string         `json:"telegram_user_id"`
	Status         string         `json:"status"`
	WaitingRetry   bool           `json:"waiting_retry"`
	SpecID         string         `json:"spec_id"`
	Region         string         `json:"region"`
	Provider       string         `json:"provider"`
	PricePaid      int64          `json:"price_paid"`
	Money          string         `json:"money,omitempty"` // held, captured or released
	Attempts       int            `json:"attempts"`
	NextRetryAt    *time.Time     `json:"next_retry_at"`
	IPAddress      *string        `json:"ip_address"`
	InstanceID     *string        `json:"instance_id"`
	ErrorMessage   *string        `json:"error_message"`
	DeadLettered   bool           `json:"dead_lettered"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	History        []HistoryEntry `json:"history"` // never null: [] when empty
	// Billing (issue 17): the end of the paid time and how many periods were paid
	// (null and 0 until the server is active), whether it renews, when a suspended
	// server is deleted, and a provider operation waiting in the queue.
	PaidUntil  *time.Time `json:"paid_until"`
	Period     int        `json:"period"`
	AutoRenew  bool       `json:"auto_renew"`
	GraceUntil *time.Time `json:"grace_until,omitempty"`
	Operation  string     `json:"operation,omitempty"` // power_off, power_on or delete
	PoweredOff bool       `json:"powered_off,omitempty"`
}

// HistoryEntry is one lifecycle step of an order.
type HistoryEntry struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	Status  string    `json:"status"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error,omitempty"`
}

// OrderPage is GET /admin/orders; NextBefore is 0 on the last page.
type OrderPage struct {
	NextBefore int64   `json:"next_before"`
	Orders     []Order `json:"orders"`
}

// DeadLetters is GET /admin/dlq, newest first.
type DeadLetters struct {
	DeadLetters []Order `json:"dead_letters"`
}

// RequeueAllResult is POST /admin/dlq/requeue.
type RequeueAllResult struct {
	Requeued int `json:"requeued"`
}

// PurgeResult is DELETE /admin/dlq.
type PurgeResult struct {
	Purged int `json:"purged"`
}

// RateLimits is GET /admin/ratelimits: windows sorted by count, highest first.
// WindowSeconds is fractional for a window that is not a whole number of seconds.
type RateLimits struct {
	Limit         int          `json:"limit"`
	WindowSeconds float64      `json:"window_seconds"`
	Windows       []RateWindow `json:"windows"`
}

type RateWindow struct {
	UserID  int64     `json:"user_id"`
	Count   int       `json:"count"`
	ResetAt time.Time `json:"reset_at"`
	Limited bool      `json:"limited"`
}

// ResetResult is DELETE /admin/ratelimit/:user; Reset says whether a window existed.
type ResetResult struct {
	Reset  bool  `json:"reset"`
	UserID int64 `json:"user_id"`
}

// Outbox is GET /admin/outbox.
type Outbox struct {
	Queued  []Message `json:"queued"`
	Recent  []Message `json:"recent"`
	Sending bool      `json:"sending"`
}

// Message is an outbox message; Text has its secrets masked. With sending off this is
// the only place a message is seen, so it is whole: its buttons and their callback data
// too (what `hangar telegram press` sends back through /webhook).
type Message struct {
	ID        uint64     `json:"id"`
	ChatID    int64      `json:"chat_id"`
	Text      string     `json:"text"`
	ParseMode string     `json:"parse_mode,omitempty"`
	Buttons   [][]Button `json:"buttons,omitempty"`
	// CallbackQueryID marks the answer to a button press (the notice the user sees
	// over the chat) rather than a chat message.
	CallbackQueryID string     `json:"callback_query_id,omitempty"`
	Status          string     `json:"status"`
	Attempts        int        `json:"attempts"`
	LastError       string     `json:"last_error,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	SentAt          *time.Time `json:"sent_at"`
}

// Button is one inline keyboard button of a message: its text and its one action.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// BlogStats is GET /api/admin/stats.
type BlogStats struct {
	TotalViews          int64        `json:"total_views"`
	TodayViews          int64        `json:"today_views"`
	TodayUniqueVisitors int64        `json:"today_unique_visitors"`
	TopSlugs            []SlugViews  `json:"top_slugs"`
	Daily               []DailyViews `json:"daily"`
	RecentVisitors      []Visitor    `json:"recent_visitors"`
}

type SlugViews struct {
	Slug  string `json:"slug"`
	Views int64  `json:"views"`
}

type DailyViews struct {
	Day            string `json:"day"`
	Views          int64  `json:"views"`
	UniqueVisitors int64  `json:"unique_visitors"`
}

type Visitor struct {
	TS      time.Time `json:"ts"`
	IP      string    `json:"ip"`
	Slug    string    `json:"slug"`
	Country string    `json:"country"`
	City    string    `json:"city"`
	Lat     float64   `json:"lat"`
	Lon     float64   `json:"lon"`
}

// Catalog is GET /admin/plans: every price is in integer minor units of Currency (an
// ISO 4217 code; KRW has no minor unit, USD has cents).
type Catalog struct {
	Currency string `json:"currency"`
	Plans    []Plan `json:"plans"`
}

// Plan is one orderable server of the catalogue.
type Plan struct {
	SpecID   string   `json:"spec_id"`
	Name     string   `json:"name"`
	Provider string   `json:"provider"`
	Plan     string   `json:"plan"`
	Regions  []string `json:"regions"`
	Price    int64    `json:"price"`
}

// Error is the JSON error body of every route, with the HTTP status it came with (not
// part of the body). The server answers every error with it; in the console, a call
// that got an answer fails with *Error, and any other failure means the daemon was not
// reached.
type Error struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
	Code    string `json:"code"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("daemon answered %d %s", e.Status, e.Code)
	}
	return fmt.Sprintf("daemon answered %d: %s", e.Status, e.Message)
}

// TelegramWebhook is getWebhookInfo's last answer: where Telegram delivers, what waits
// there, and its last delivery error.
type TelegramWebhook struct {
	URL            string    `json:"url"`
	PendingUpdates int       `json:"pending_update_count"`
	LastError      string    `json:"last_error_message,omitempty"`
	LastErrorAt    time.Time `json:"last_error_at,omitzero"`
	CheckedAt      time.Time `json:"checked_at"`
	CheckError     string    `json:"check_error,omitempty"`
}
