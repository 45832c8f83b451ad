package tui_test

import (
	"strings"
	"testing"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

// With sending off the outbox is where an operator follows an order's talk: enter
// opens the message under the cursor whole (text, parse mode, every button with its
// callback data on a line of its own, the callback query an answer is for), the pane
// follows the cursor, stays on its message when new ones arrive above, and never
// shows a secret.
func TestOutboxDetailShowsMessageWhole(t *testing.T) {
	b := setup(t)
	b.waitScreen(t, "queue depth")
	b.keys("6")
	b.waitScreen(t, "order received", "↩ Cancelled.")
	b.keys("down", "down", "down", "enter") // 9, 8, 7, then the answer #5
	b.waitScreen(t, "button answer #5", "callback query 4382910374625012741", "plain text")
	b.keys("down")
	b.waitScreen(t, "message #4", "parse    HTML", "<b>Simulated nano</b>", "buttons (2)",
		"[1] ✅ Confirm → oc:9f86d081884c7d65", "[2] ✖ Cancel → ox:9f86d081884c7d65", "hangar telegram press 4 1")

	b.d.Send(api.Event{Type: api.EventMessage, Message: &api.Message{ID: 10, ChatID: 7003, Text: "Order #46 received", Status: "queued", CreatedAt: fakedaemon.Now}})
	b.waitScreen(t, "Order #46 received")
	b.keys("up", "up") // #5, then #7 with its password
	b.waitScreen(t, "message #7")
	out := b.finish(t)
	if strings.Contains(out, "hunter2") {
		t.Fatalf("the detail shows a password:\n%s", out)
	}
	if !strings.Contains(out, "message #7") || !strings.Contains(out, "password=••••") {
		t.Errorf("after a new message above, up twice from #4 should be #7, masked:\n%s", out)
	}
}
