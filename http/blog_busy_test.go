package http

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/store"
)

// A comment write refused because too many passwords are being hashed is a 503 the
// blog may retry in a second, not a store failure logged per request.
func TestBlogErrorPasswordBusy(t *testing.T) {
	s := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{})
	app := fiber.New(fiber.Config{ErrorHandler: errorHandler(s.cfg.Logger)})
	app.Post("/x", func(c *fiber.Ctx) error {
		return s.blogError(c, fmt.Errorf("add comment: %w", store.ErrPasswordBusy))
	})
	resp, err := app.Test(httptest.NewRequest("POST", "/x", nil))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error, Code string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || body.Code != "busy" || body.Error == "" || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("answer %d %+v Retry-After %q, want 503 busy with a sentence and Retry-After 1", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}
