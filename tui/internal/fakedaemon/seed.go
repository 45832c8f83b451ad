package fakedaemon

import (
	"strconv"
	"time"

	"github.com/hangarhq/hangar/http/api"
)

// Now is the fixed clock the seed data is relative to; tests give it to the console.
var Now = time.Date(2026, 11, 29, 19, 40, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func order(id, user int64, status string, attempts int, errMsg string) api.Order {
	o := api.Order{
		// Users met through the bot have the Telegram id as their user id: ten digits.
		OrderID: id, UserID: 7000012340 + user, TelegramUserID: strconv.FormatInt(7000012340+user, 10),
		Status: status, SpecID: "nano-1", Region: "tokyo", Provider: "sim", PricePaid: 5000,
		Attempts: attempts, CreatedAt: Now.Add(-time.Duration(id) * time.Minute), UpdatedAt: Now.Add(-time.Duration(id) * 10 * time.Second),
		History: []api.HistoryEntry{{At: Now.Add(-time.Duration(id) * time.Minute), Event: "enqueued", Status: "pending"}},
	}
	if status == "active" {
		o.IPAddress, o.InstanceID = ptr("203.0.113.7"), ptr("sim-42")
		o.History = append(o.History, api.HistoryEntry{At: o.UpdatedAt, Event: "succeeded", Status: "active", Attempt: attempts})
	}
	if errMsg != "" {
		o.ErrorMessage = ptr(errMsg)
		for a := 1; a <= attempts; a++ {
			o.History = append(o.History, api.HistoryEntry{At: o.CreatedAt.Add(time.Duration(a) * 2 * time.Second), Event: "retry_scheduled", Status: "provisioning", Attempt: a, Error: errMsg})
		}
	}
	if status == "failed" {
		o.History = append(o.History, api.HistoryEntry{At: o.UpdatedAt, Event: "dead_lettered", Status: "failed", Attempt: attempts, Error: errMsg})
	}
	return o
}

// NewOrder is one order as Seed makes them, for tests that need more of them.
func NewOrder(id, user int64, status string, attempts int, errMsg string) api.Order {
	return order(id, user, status, attempts, errMsg)
}

// Seed fills d with a small, fixed picture of a busy daemon.
func Seed(d *Daemon) {
	d.Stats = api.QueueStats{
		At: Now, Depth: 12, Pending: 10, WaitingRetry: 2, InFlight: 5, MaxConcurrency: 5,
		Enqueued: 150, Started: 140, Retried: 30, Succeeded: 100, DeadLettered: 3, DeadLetters: 3,
		LagSeconds: 4.2,
		Thresholds: api.Thresholds{Depth: 500, DeadLetters: 10, LagSeconds: 600},
	}
	d.AllOrders = []api.Order{
		order(45, 1, "pending", 0, ""),
		order(44, 2, "provisioning", 2, "linode: 503 service unavailable"),
		order(43, 3, "active", 1, ""),
		order(42, 1, "failed", 4, "vultr: plan sold out in region"),
		order(41, 4, "active", 1, ""),
		order(40, 2, "cancelled", 0, ""),
	}
	d.DLQ = []api.Order{
		order(42, 1, "failed", 4, "vultr: plan sold out in region"),
		order(39, 5, "failed", 4, "sim: simulated failure"),
		order(38, 6, "failed", 4, "sim: simulated failure"),
	}
	d.Limits = api.RateLimits{Limit: 30, WindowSeconds: 60, Windows: []api.RateWindow{
		{UserID: 7001, Count: 30, ResetAt: Now.Add(40 * time.Second), Limited: true},
		{UserID: 7002, Count: 26, ResetAt: Now.Add(12 * time.Second)},
		{UserID: 7003, Count: 3, ResetAt: Now.Add(55 * time.Second)},
	}}
	d.Mail = api.Outbox{
		Sending: false,
		Queued:  []api.Message{{ID: 9, ChatID: 7001, Text: "order received (#45)", Status: "queued", CreatedAt: Now.Add(-2 * time.Second)}},
		Recent: []api.Message{
			{ID: 8, ChatID: 7003, Text: "server ready: 203.0.113.7 root password: ••••••••", Status: "logged", Attempts: 1, CreatedAt: Now.Add(-time.Minute), SentAt: ptr(Now.Add(-time.Minute))},
			{ID: 7, ChatID: 7004, Text: "server ready: 203.0.113.9 password=hunter2", Status: "logged", Attempts: 1, CreatedAt: Now.Add(-2 * time.Minute), SentAt: ptr(Now.Add(-2 * time.Minute))},
		},
	}
	d.Catalog = api.Catalog{Currency: "KRW", Plans: []api.Plan{
		{SpecID: "nano-1", Name: "Simulated nano", Provider: "sim", Plan: "sim-1c-1g", Regions: []string{"tokyo", "seoul"}, Price: 5000},
	}}
	d.Blog = api.BlogStats{
		TotalViews: 12840, TodayViews: 312, TodayUniqueVisitors: 97,
		TopSlugs: []api.SlugViews{{Slug: "hello-hangar", Views: 5120}, {Slug: "badger-ttl", Views: 2210}, {Slug: "wish-ssh-tui", Views: 990}},
		Daily:    []api.DailyViews{{Day: "2026-11-29", Views: 312, UniqueVisitors: 97}, {Day: "2026-11-28", Views: 401, UniqueVisitors: 120}},
	}
}
