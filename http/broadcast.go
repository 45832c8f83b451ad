package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/store"
)

// Broadcasts is what the admin API needs to message every user of the bot.
type Broadcasts interface {
	CreateBroadcast(text, by string) (store.Broadcast, error)
	Broadcasts(limit int) ([]store.Broadcast, error)
	GetBroadcast(id int64) (store.Broadcast, error)
	CancelBroadcast(id int64) (store.Broadcast, error)
}

func (s *Server) broadcastRoutes(admin fiber.Router) {
	admin.Post("/broadcast", s.createBroadcast)
	admin.Get("/broadcast", s.listBroadcasts)
	admin.Get("/broadcast/:id", s.getBroadcast)
	admin.Post("/broadcast/:id/cancel", s.cancelBroadcast)
}

// broadcastActor names who asked, for the broadcast's By: the audit log's actor (the
// admin token, or the console's SSH key and its comment).
func broadcastActor(c *fiber.Ctx) string {
	if who := principalOf(c).Actor; who != "" {
		return who
	}
	return "admin"
}

// createBroadcast is POST /admin/broadcast {"text"}: 201 with the broadcast once it and
// its recipients are durable; the broadcaster sends it from then on.
func (s *Server) createBroadcast(c *fiber.Ctx) error {
	text, err := parseBroadcastRequest(c.Body())
	if err != nil {
		return err
	}
	b, err := s.deps.Broadcasts.CreateBroadcast(text, broadcastActor(c))
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(b)
}

// parseBroadcastRequest reads {"text": "..."}: the text trimmed, 1 to 4096 characters.
func parseBroadcastRequest(body []byte) (string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", badRequest("empty_body", "the request body is empty; send a JSON object")
	}
	var req struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return "", badRequest("invalid_field", "field "+te.Field+" has the wrong type")
		}
		return "", errMalformedJSON
	}
	if req.Text == nil {
		return "", badRequest("missing_text", "text is required")
	}
	text, err := engine.BroadcastText(*req.Text)
	if err != nil {
		return "", badRequest("bad_text", err.Error())
	}
	return text, nil
}

// listBroadcasts is GET /admin/broadcast?limit=: newest first, with progress.
func (s *Server) listBroadcasts(c *fiber.Ctx) error {
	limit := store.BroadcastCap
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.BroadcastCap {
			return badRequest("bad_limit", "limit must be 1 to "+strconv.Itoa(store.BroadcastCap))
		}
		limit = n
	}
	list, err := s.deps.Broadcasts.Broadcasts(limit)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"broadcasts": list})
}

// getBroadcast is GET /admin/broadcast/:id.
func (s *Server) getBroadcast(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	b, err := s.deps.Broadcasts.GetBroadcast(id)
	if err != nil {
		return err
	}
	return c.JSON(b)
}

// cancelBroadcast is POST /admin/broadcast/:id/cancel: nothing more of it is sent.
func (s *Server) cancelBroadcast(c *fiber.Ctx) error {
	id, err := pathInt64(c, "id")
	if err != nil {
		return err
	}
	b, err := s.deps.Broadcasts.CancelBroadcast(id)
	if err != nil {
		return err
	}
	return c.JSON(b)
}
