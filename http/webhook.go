package http

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/engine"
)

// webhook takes a Telegram update. It answers 200 only once the update is processed
// and its outcome durable, so Telegram re-delivers anything hangar did not keep; a
// re-delivery of an update_id already processed is answered 200 and ignored.
func (s *Server) webhook(c *fiber.Ctx) error {
	if s.cfg.WebhookSecret == "" {
		return errSecretUnset
	}
	if !secretEqual(c.Get("X-Telegram-Bot-Api-Secret-Token"), s.cfg.WebhookSecret) {
		return errBadSecret
	}
	body := c.Body()
	h, err := engine.ParseUpdateHeader(body)
	if err != nil {
		return errMalformedJSON
	}
	if h.ID <= 0 {
		return badRequest("missing_update_id", "update_id must be a positive integer")
	}
	fresh, err := s.deps.Updates.AcceptUpdate(h, body)
	switch {
	case errors.Is(err, engine.ErrNotStarted):
		return errNotStarted
	case errors.Is(err, engine.ErrBusy):
		c.Set(fiber.HeaderRetryAfter, "5")
		return errBusy
	case errors.Is(err, engine.ErrUpdateTimeout):
		c.Set(fiber.HeaderRetryAfter, "5")
		return errUpdateSlow
	case errors.Is(err, engine.ErrUpdatePanicked):
		s.cfg.Logger.Error("webhook: processing the update failed", "update_id", h.ID, "err", err)
		return errUpdateFailed
	case err != nil:
		if ae := domainError(err); ae != nil {
			return ae // a full disk (507) or a failing log (503), logged once by the store
		}
		s.cfg.Logger.Error("webhook: could not store update", "update_id", h.ID, "err", err)
		return errStoreFailure
	}
	if !fresh {
		return sendJSON(c, webhookDuplicateJSON)
	}
	return sendJSON(c, webhookOKJSON)
}

// Every Telegram update is answered with one of these two bodies, so they are
// encoded once rather than through reflection per update.
var (
	webhookOKJSON        = mustJSON(webhookResponse{OK: true})
	webhookDuplicateJSON = mustJSON(webhookResponse{OK: true, Duplicate: true})
)

var (
	errUpdateSlow   = newError(fiber.StatusServiceUnavailable, "busy", "the update was not processed in time; Telegram will deliver it again")
	errUpdateFailed = newError(fiber.StatusInternalServerError, "internal", "processing the update failed; Telegram will deliver it again")
)

type webhookResponse struct {
	OK        bool `json:"ok"`
	Duplicate bool `json:"duplicate,omitempty"`
}
