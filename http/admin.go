package http

import (
	"github.com/gofiber/fiber/v2"

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
	return c.JSON(fiber.Map{"user_id": user, "reset": existed})
}

// Balances is what the admin API needs to credit users.
type Balances interface {
	Deposit(user, amount int64) (store.Balance, error)
	GetBalance(user int64) (store.Balance, error)
	Ledger(user int64, limit int) ([]store.LedgerEntry, error)
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
	ledger, err := s.deps.Balances.Ledger(user, 1000)
	if err != nil {
		return err
	}
	if ledger == nil {
		ledger = []store.LedgerEntry{}
	}
	return c.JSON(fiber.Map{"balance": b, "ledger": ledger})
}
