package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/store"
)

// Orders is what the provisioning and admin APIs need from the engine.
type Orders interface {
	CreateOrder(req engine.OrderRequest) (store.Order, error)
	Provision(orderID, userID, telegramUserID int64) (store.Order, error)
	GetOrder(id int64) (store.Order, error)
	ListOrders(status string, limit int, before int64) ([]store.Order, error)
	DeadLetters(limit int) ([]store.Order, error)
	CancelOrder(id int64) (store.Order, error)
	TerminateOrder(id int64) (store.Order, error)
	Plans() *catalog.Catalog
	RequeueDeadLetter(id int64) (store.Order, error)
	RequeueAllDeadLetters() (int, error)
	PurgeDeadLetters() (int, error)
	QueueStats() (engine.QueueStats, error)
	Subscribe(size int) (<-chan engine.Event, func(), error)
}

var errNotAnID = errors.New("not an integer id")

// flexID accepts an id as a JSON number or a string of digits (the seed sends
// telegram_user_id as a string).
type flexID int64

func (f *flexID) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if len(b) == 0 || string(b) == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errNotAnID
	}
	*f = flexID(n)
	return nil
}

// decodeJSON reads a JSON object body into v, or returns a 400 saying what is wrong.
func decodeJSON(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty_body", "the request body is empty; send a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return badRequest("invalid_field", "field "+te.Field+" has the wrong type")
		}
		if errors.Is(err, errNotAnID) {
			return badRequest("invalid_field", "an id field is not an integer")
		}
		return errMalformedJSON
	}
	return nil
}

type createOrderRequest struct {
	UserID         flexID `json:"user_id"`
	TelegramUserID flexID `json:"telegram_user_id"`
	SpecID         string `json:"spec_id"`
	Region         string `json:"region"`
}

// createOrder is POST /orders: 201 once the order is durable and queued.
func (s *Server) createOrder(c *fiber.Ctx) error {
	var req createOrderRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	var missing []string
	if req.UserID <= 0 {
		missing = append(missing, "user_id")
	}
	if req.TelegramUserID <= 0 {
		missing = append(missing, "telegram_user_id")
	}
	if req.SpecID == "" {
		missing = append(missing, "spec_id")
	}
	if req.Region == "" {
		missing = append(missing, "region")
	}
	if len(missing) > 0 {
		return badRequest("missing_fields", "missing or invalid: "+strings.Join(missing, ", "))
	}
	key := c.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey || strings.IndexFunc(key, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
		return badRequest("bad_idempotency_key", "Idempotency-Key must be at most "+strconv.Itoa(maxIdempotencyKey)+" printable ASCII characters")
	}
	o, err := s.deps.Orders.CreateOrder(engine.OrderRequest{
		UserID: int64(req.UserID), TelegramUserID: int64(req.TelegramUserID), SpecID: req.SpecID, Region: req.Region,
		IdempotencyKey: strings.Clone(key),
	})
	status := fiber.StatusCreated
	if errors.Is(err, store.ErrRepeatedOrder) {
		// The same request again (the client did not hear the first answer): the
		// order it made, nothing held twice.
		status, err = fiber.StatusOK, nil
	}
	if err != nil {
		return err
	}
	// Written by hand: encoding a map through c.JSON was 3 % of the objects an orders
	// run allocated.
	var buf [64]byte
	c.Status(status)
	return sendJSON(c, appendOrderCreatedJSON(buf[:0], o.ID, o.Status))
}

type provisionRequest struct {
	OrderID        flexID `json:"order_id"`
	UserID         flexID `json:"user_id"`
	TelegramUserID flexID `json:"telegram_user_id"`
}

// maxIdempotencyKey bounds an Idempotency-Key header.
const maxIdempotencyKey = 255

// provision is seed 002's POST /provision: enqueue an existing pending order.
func (s *Server) provision(c *fiber.Ctx) error {
	var req provisionRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.OrderID <= 0 || req.UserID <= 0 || req.TelegramUserID <= 0 {
		return badRequest("missing_fields", "order_id, user_id and telegram_user_id are required")
	}
	o, err := s.deps.Orders.Provision(int64(req.OrderID), int64(req.UserID), int64(req.TelegramUserID))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{
		"success": true, "order_id": o.ID, "message": "Order received; the server is being created.",
	})
}

// statusResponse has the seed's fields and the paid time (issue 17).
type statusResponse struct {
	OrderID      int64     `json:"order_id"`
	Status       string    `json:"status"`
	SpecID       string    `json:"spec_id"`
	Region       string    `json:"region"`
	PricePaid    int64     `json:"price_paid"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	IPAddress    *string   `json:"ip_address"`
	ErrorMessage *string   `json:"error_message"`
	// PaidUntil is null until the server is active; Period counts the periods paid.
	PaidUntil *time.Time `json:"paid_until"`
	Period    int        `json:"period"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// status is GET /status/:order_id.
func (s *Server) status(c *fiber.Ctx) error {
	id, err := pathInt64(c, "order_id")
	if err != nil {
		return err
	}
	o, err := s.deps.Orders.GetOrder(id)
	if err != nil {
		return err
	}
	return c.JSON(statusResponse{
		OrderID: o.ID, Status: o.Status, SpecID: o.SpecID, Region: o.Region, PricePaid: o.PricePaid,
		CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(),
		IPAddress: nullable(o.IPAddress), ErrorMessage: nullable(o.LastError),
		PaidUntil: nullableTime(o.PaidUntil), Period: o.Period,
	})
}
