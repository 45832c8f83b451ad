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
	seedAudit(d)
	seedBroadcasts(d)
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
		{UserID: 7000012341, Count: 2, ResetAt: Now.Add(31 * time.Second)},
	}}
	d.Mail = api.Outbox{
		Sending: false,
		Queued:  []api.Message{{ID: 9, ChatID: 7001, Text: "order received (#45)", Status: "queued", CreatedAt: Now.Add(-2 * time.Second)}},
		Recent: []api.Message{
			{ID: 8, ChatID: 7003, Text: "server ready: 203.0.113.7 root password: ••••••••", Status: "logged", Attempts: 1, CreatedAt: Now.Add(-time.Minute), SentAt: ptr(Now.Add(-time.Minute))},
			{ID: 7, ChatID: 7004, Text: "server ready: 203.0.113.9 password=hunter2", Status: "logged", Attempts: 1, CreatedAt: Now.Add(-2 * time.Minute), SentAt: ptr(Now.Add(-2 * time.Minute))},
			// An order's flow with sending off: the question with its buttons, then the
			// answer to the press of one.
			{ID: 5, ChatID: 7003, CallbackQueryID: "4382910374625012741", Text: "Cancelled.", Status: "logged", Attempts: 1,
				CreatedAt: Now.Add(-3 * time.Minute), SentAt: ptr(Now.Add(-3 * time.Minute))},
			{ID: 4, ChatID: 7003, ParseMode: "HTML", Status: "logged", Attempts: 1,
				Text:      "Order <b>Simulated nano</b> in <b>tokyo</b> for <b>5,000 KRW</b> a month?\nYour balance: 15,000 KRW. The price is held now and charged when the server is ready.",
				Buttons:   [][]api.Button{{{Text: "✅ Confirm", CallbackData: "oc:9f86d081884c7d65"}, {Text: "✖ Cancel", CallbackData: "ox:9f86d081884c7d65"}}},
				CreatedAt: Now.Add(-3*time.Minute - 20*time.Second), SentAt: ptr(Now.Add(-3*time.Minute - 20*time.Second))},
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
	u1 := int64(7000012341)
	d.Users = map[int64]api.User{u1: {
		Balance: api.Balance{UserID: u1, Available: 15000, Held: 5000, UpdatedAt: Now.Add(-7 * time.Minute)},
		Ledger: []api.LedgerEntry{
			{Seq: 1, UserID: u1, Kind: "deposit", Amount: 20000, Available: 20000, At: Now.Add(-3 * time.Hour), Note: "admin"},
			{Seq: 2, UserID: u1, Kind: "hold", Amount: 5000, OrderID: 45, Available: 15000, Held: 5000, At: Now.Add(-45 * time.Minute)},
			{Seq: 3, UserID: u1, Kind: "hold", Amount: 5000, OrderID: 42, Available: 10000, Held: 10000, At: Now.Add(-42 * time.Minute)},
			{Seq: 4, UserID: u1, Kind: "release", Amount: 5000, OrderID: 42, Available: 15000, Held: 5000, At: Now.Add(-7 * time.Minute)},
		},
	}}
	d.Mail.Recent = append(d.Mail.Recent, api.Message{ID: 6, ChatID: u1, Text: "order received (#45)", Status: "logged", Attempts: 1,
		CreatedAt: Now.Add(-45 * time.Minute), SentAt: ptr(Now.Add(-45 * time.Minute))})
	d.Blogs = []api.Comment{
		{ID: 14, Slug: "hello-hangar", Name: "민수", Content: "잘 읽었습니다! 배포는 어떻게 하나요?", IP: "198.51.100.4", CreatedAt: Now.Add(-5 * time.Minute)},
		{ID: 13, Slug: "badger-ttl", Name: "spammer", Content: "cheap pills at http://spam.example", IP: "203.0.113.66", CreatedAt: Now.Add(-50 * time.Minute)},
		{ID: 11, Slug: "wish-ssh-tui", Name: "Ana", Content: "Does the console work over mosh?", IP: "192.0.2.9", CreatedAt: Now.Add(-26 * time.Hour), EditedAt: ptr(Now.Add(-25 * time.Hour))},
	}
	d.Inqs = []api.Inquiry{
		{ID: 5, Name: "김지은", Email: "jieun@example.com", Message: "광고 문의 드립니다. 연락 부탁드려요.", IP: "198.51.100.8", CreatedAt: Now.Add(-20 * time.Minute)},
		{ID: 4, Name: "Tom", Email: "tom@example.org", Message: "Your RSS feed is broken since Tuesday.", IP: "192.0.2.33", CreatedAt: Now.Add(-30 * time.Hour), Read: true},
	}
	places := []struct {
		country, city string
		lat, lon      float64
		n             int
	}{
		{"KR", "Seoul", 37.57, 126.98, 40}, {"KR", "Busan", 35.18, 129.08, 12}, {"JP", "Tokyo", 35.68, 139.69, 15},
		{"US", "San Francisco", 37.77, -122.42, 9}, {"US", "New York", 40.71, -74.01, 6}, {"DE", "Berlin", 52.52, 13.40, 5},
		{"GB", "London", 51.51, -0.13, 4}, {"BR", "São Paulo", -23.55, -46.63, 3}, {"AU", "Sydney", -33.87, 151.21, 2},
		{"IN", "Bengaluru", 12.97, 77.59, 2}, {"ZA", "Cape Town", -33.92, 18.42, 1},
	}
	i := 0
	for _, p := range places {
		for range p.n {
			d.Hits = append(d.Hits, api.VisitorPoint{TS: Now.Add(-time.Duration(i) * time.Minute), Country: p.country, City: p.city, Lat: p.lat, Lon: p.lon})
			i++
		}
	}
	logs := []api.LogRecord{
		{Level: "INFO", Msg: "hangar serving", Attrs: "http=127.0.0.1:8080 data=./data rate_limit=30 telegram=false"},
		{Level: "WARN", Msg: "no bot token: Telegram sending is off; replies go to the log and the console's outbox view"},
		{Level: "INFO", Msg: "order accepted", Attrs: "order=45 user=7000012341 spec=nano-1"},
		{Level: "WARN", Msg: "provider call failed, retrying", Attrs: "order=44 attempt=2 err=\"linode: 503 service unavailable\""},
		{Level: "ERROR", Msg: "order dead-lettered", Attrs: "order=42 attempts=4 err=\"vultr: plan sold out in region\""},
		{Level: "DEBUG", Msg: "outbox scan", Attrs: "queued=1"},
		{Level: "INFO", Msg: "message logged", Attrs: "chat=7003 text=\"server ready: 203.0.113.7 root password: ••••••••\""},
	}
	for j, r := range logs {
		r.Seq, r.Time = uint64(j+1), Now.Add(-time.Duration(len(logs)-j)*7*time.Second)
		d.LogRecs = append(d.LogRecs, r)
	}
	d.Report = api.ReconcileReport{
		At: Now.Add(-3 * time.Minute), Providers: []string{"linode", "vultr"}, Servers: 14,
		Duplicates: []api.ReconcileFinding{{Provider: "linode", InstanceID: "60123457", Label: "hangar-order-43", IPv4: "203.0.113.21",
			Created: Now.Add(-70 * time.Minute), OrderID: 43, OrderStatus: "active", Kept: "60123456", Reason: "second server of an active order"}},
		Orphans: []api.ReconcileFinding{{Provider: "vultr", InstanceID: "a1b2c3d4-0000", Label: "hangar-order-39", IPv4: "198.51.100.77",
			Created: Now.Add(-5 * time.Hour), OrderID: 39, OrderStatus: "failed", Reason: "server of a failed order"}},
	}
}
