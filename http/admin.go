package http

import (
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// resetRateLimit clears one user's message window (DELETE /admin/ratelimit/:user).
func (s *Server) resetRateLimit(c *fiber.Ctx) error {
	user, err := pathInt64(c, "user")
	if err != nil {
		return err
	}
	existed, err := s.deps.RateLimits.ResetRateLimit(user)
	if err != nil {
		return err
	}
	return c.JSON(api.ResetResult{UserID: user, Reset: existed})
}

// Balances is what the admin API needs to credit users.
type Balances interface {
	Deposit(user, amount int64) (store.Balance, error)
	GetBalance(user int64) (store.Balance, error)
	LedgerTail(user int64, limit int) ([]store.LedgerEntry, error)
}

// maxDeposit keeps a typo from minting absurd balances.
const maxDeposit = 1_000_000_000

// deposit credits a Telegram user's balance (POST /admin/users/:id/deposit {amount}).
func (s *Server) deposit(c *fiber.Ctx) error {
	user, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	var req struct {
		Amount *int64 `json:"amount"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Amount == nil || *req.Amount <= 0 || *req.Amount > maxDeposit {
		return badRequest("bad_amount", "amount must be a whole number of minor units from 1 to 1000000000")
	}
	b, err := s.deps.Balances.Deposit(user, *req.Amount)
	if err != nil {
		return err
	}
	return c.JSON(b)
}

// balance shows a user's balance and latest ledger entries (GET /admin/users/:id).
func (s *Server) balance(c *fiber.Ctx) error {
	user, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	b, err := s.deps.Balances.GetBalance(user)
	if err != nil {
		return err
	}
	ledger, err := s.deps.Balances.LedgerTail(user, 1000)
	if err != nil {
		return err
	}
	if ledger == nil {
		ledger = []store.LedgerEntry{}
	}
	return c.JSON(fiber.Map{"balance": b, "ledger": ledger})
}

// Inspector is what the console's rate-limit and outbox views read from the store.
type Inspector interface {
	ListWindows(minCount, limit int) ([]store.WindowEntry, error)
	QueuedMessages(limit int) ([]store.OutboxMessage, error)
	RecentMessages(limit int) ([]store.OutboxMessage, error)
}

// rateLimits lists live message windows, fullest first (GET /admin/ratelimits?min=1).
func (s *Server) rateLimits(c *fiber.Ctx) error {
	minCount := 1
	if raw := c.Query("min"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			return badRequest("bad_min", "min must be a whole number")
		}
		minCount = n
	}
	limit, err := queryLimit(c, 200, 5000)
	if err != nil {
		return err
	}
	// Read more than asked: the fullest windows can be anywhere in key order.
	entries, err := s.deps.Inspector.ListWindows(minCount, 50000)
	if err != nil {
		return err
	}
	now := time.Now()
	out := make([]api.RateWindow, 0, len(entries))
	for _, e := range entries {
		if !e.ResetAt.After(now) {
			continue // expired; Badger drops it at its TTL
		}
		out = append(out, api.RateWindow{UserID: e.UserID, Count: e.Count, ResetAt: e.ResetAt.UTC(), Limited: e.Count >= s.cfg.RateLimit})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].UserID < out[j].UserID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return c.JSON(api.RateLimits{Limit: s.cfg.RateLimit, WindowSeconds: s.cfg.RateWindow.Seconds(), Windows: out})
}

// viewMessages shows outbox messages with their secrets masked.
func viewMessages(ms []store.OutboxMessage) []api.Message {
	out := make([]api.Message, 0, len(ms))
	for _, m := range ms {
		v := api.Message{ID: m.ID, ChatID: m.ChatID, Text: m.Loggable(), ParseMode: m.ParseMode, CallbackQueryID: m.CallbackQueryID,
			Status: m.Status, Attempts: m.Attempts, LastError: m.LastError, CreatedAt: m.CreatedAt.UTC()}
		if len(m.ReplyMarkup) > 0 {
			var kb struct {
				InlineKeyboard [][]api.Button `json:"inline_keyboard"`
			}
			// A markup that does not decode is shown without buttons; the sender
			// refuses it on its own.
			if json.Unmarshal(m.ReplyMarkup, &kb) == nil {
				v.Buttons = kb.InlineKeyboard
			}
		}
		if !m.SentAt.IsZero() {
			t := m.SentAt.UTC()
			v.SentAt = &t
		}
		out = append(out, v)
	}
	return out
}

// outbox shows queued and recently sent Telegram messages, secrets masked (GET /admin/outbox).
func (s *Server) outbox(c *fiber.Ctx) error {
	limit, err := queryLimit(c, 100, 1000)
	if err != nil {
		return err
	}
	queued, err := s.deps.Inspector.QueuedMessages(limit)
	if err != nil {
		return err
	}
	recent, err := s.deps.Inspector.RecentMessages(limit)
	if err != nil {
		return err
	}
	return c.JSON(api.Outbox{Sending: s.cfg.Sending, Queued: viewMessages(queued), Recent: viewMessages(recent)})
}
