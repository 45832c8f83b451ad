package http

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/store"
)

// apiError is an error with the status and machine code a client sees.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func newError(status int, code, message string) *apiError {
	return &apiError{status: status, code: code, message: message}
}

var (
	errUnauthorized  = newError(fiber.StatusUnauthorized, "unauthorized", "missing or malformed credentials")
	errForbidden     = newError(fiber.StatusForbidden, "forbidden", "wrong token")
	errBadSecret     = newError(fiber.StatusUnauthorized, "unauthorized", "missing or wrong X-Telegram-Bot-Api-Secret-Token")
	errSecretUnset   = newError(fiber.StatusServiceUnavailable, "not_configured", "the webhook secret is not configured (set HANGAR_WEBHOOK_SECRET)")
	errAdminUnset    = newError(fiber.StatusServiceUnavailable, "not_configured", "the admin token is not configured (set HANGAR_ADMIN_TOKEN)")
	errMalformedJSON = newError(fiber.StatusBadRequest, "malformed_json", "the request body is not valid JSON")
	errBusy          = newError(fiber.StatusServiceUnavailable, "busy", "too many updates are waiting to be processed; Telegram will deliver this one again")
	errNotStarted    = newError(fiber.StatusServiceUnavailable, "starting", "hangar is starting or stopping; try again")
	errStoreFailure  = newError(fiber.StatusServiceUnavailable, "store_unavailable", "the store could not record the request; try again")
	errDiskFull      = newError(fiber.StatusInsufficientStorage, "insufficient_storage", "the server's disk is too full to record this; nothing was stored, try again once an operator has freed space")
	errUnknownMethod = newError(fiber.StatusNotImplemented, "method_not_implemented", "this server does not implement that HTTP method")
)

func badRequest(code, message string) *apiError {
	return newError(fiber.StatusBadRequest, code, message)
}

// errorHandler maps every error a handler or Fiber itself returns to JSON.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var ae *apiError
		var fe *fiber.Error
		switch {
		case errors.As(err, &ae):
			if ae.status == fiber.StatusRequestEntityTooLarge {
				lingerOnClose(c)
			}
		case errors.As(err, &fe):
			ae = fiberError(fe)
			if fe.Code == fiber.StatusRequestEntityTooLarge {
				// fasthttp stopped reading a body over the limit and will close the
				// connection: let the client read the 413 before the close resets it.
				lingerOnClose(c)
			}
		case domainError(err) != nil:
			ae = domainError(err)
			if ae.status >= 500 {
				log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
			}
		default:
			log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
			ae = newError(fiber.StatusInternalServerError, "internal", "internal error")
		}
		// api.Error is the one JSON shape of every error, admin or not.
		return c.Status(ae.status).JSON(api.Error{Message: ae.message, Code: ae.code})
	}
}

func fiberError(fe *fiber.Error) *apiError {
	switch fe.Code {
	case fiber.StatusRequestEntityTooLarge:
		return newError(fe.Code, "body_too_large", "the request body is larger than the configured limit")
	case fiber.StatusNotFound:
		return newError(fe.Code, "not_found", "no such route")
	case fiber.StatusMethodNotAllowed:
		return newError(fe.Code, "method_not_allowed", "method not allowed on this route")
	case fiber.StatusUnsupportedMediaType:
		return newError(fe.Code, "unsupported_media_type", "send application/json")
	}
	return newError(fe.Code, "http_error", fe.Message)
}

// domainError maps the engine's and store's sentinel errors to what a client sees. A
// write the disk refused is the store's, not the request's, fault: 507 when the disk is
// full, 503 when the log cannot write, on every route alike.
func domainError(err error) *apiError {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return newError(fiber.StatusNotFound, "not_found", "no such order")
	case errors.Is(err, engine.ErrOrderState):
		return newError(fiber.StatusConflict, "conflict", err.Error())
	case errors.Is(err, store.ErrInsufficientFunds):
		return newError(fiber.StatusPaymentRequired, "insufficient_funds", "the balance does not cover this plan")
	case errors.Is(err, engine.ErrIdempotencyConflict):
		return newError(fiber.StatusConflict, "idempotency_conflict", err.Error())
	case errors.Is(err, store.ErrOrderRateLimited):
		return newError(fiber.StatusTooManyRequests, "order_rate_limited", "too many orders from this user; try again later")
	case errors.Is(err, engine.ErrUnknownPlan):
		return newError(fiber.StatusBadRequest, "unknown_plan", err.Error())
	case errors.Is(err, engine.ErrPlanUnavailable):
		return newError(fiber.StatusUnprocessableEntity, "plan_unavailable", err.Error())
	case errors.Is(err, engine.ErrUnknownRegion):
		return newError(fiber.StatusBadRequest, "unknown_region", err.Error())
	case errors.Is(err, engine.ErrBroadcastNotFound):
		return newError(fiber.StatusNotFound, "not_found", "no such broadcast")
	case errors.Is(err, engine.ErrBroadcastFinished):
		return newError(fiber.StatusConflict, "conflict", "the broadcast has already finished or been cancelled")
	case errors.Is(err, engine.ErrNoRecipients):
		return newError(fiber.StatusConflict, "no_recipients", "nobody has talked to the bot yet")
	case errors.Is(err, store.ErrAlreadyRefunded):
		return newError(fiber.StatusConflict, "already_refunded", "this payment was refunded already")
	case errors.Is(err, store.ErrRefundUncovered):
		return newError(fiber.StatusConflict, "refund_uncovered", "the user's available balance no longer covers this payment (they spent it); nothing was refunded")
	case errors.Is(err, engine.ErrPaymentsOff):
		return newError(fiber.StatusServiceUnavailable, "payments_off", err.Error())
	case errors.Is(err, engine.ErrRefundRefused):
		return newError(fiber.StatusBadGateway, "refund_refused", err.Error()+"; the balance was put back")
	case errors.Is(err, engine.ErrRefundPending):
		return newError(fiber.StatusBadGateway, "refund_pending", err.Error())
	case errors.Is(err, engine.ErrNotStarted):
		return errNotStarted
	case errors.Is(err, store.ErrInsufficientStorage):
		return errDiskFull
	case errors.Is(err, store.ErrLogUnavailable), errors.Is(err, store.ErrClosed):
		return errStoreFailure
	}
	return nil
}
