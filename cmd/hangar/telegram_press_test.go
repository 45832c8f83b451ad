package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// With sending off, the whole chat order flow runs offline against a real daemon:
// send /order, read the quote and its buttons from the outbox, press Confirm, and the
// order is created and provisioned.
func TestOfflineBotOrderFlow(t *testing.T) {
	d := startDaemon(t, t.TempDir(), "HANGAR_SIM_LATENCY=100ms", "HANGAR_SIM_FAIL_RATE=0")
	env := []string{"HANGAR_CONSOLE_ADDR=" + strings.TrimPrefix(d.URL, "http://"),
		"HANGAR_ADMIN_TOKEN=" + hangartest.AdminToken, "HANGAR_WEBHOOK_SECRET=" + hangartest.WebhookSecret}
	run := func(args ...string) string {
		t.Helper()
		out, err := hangarCmd(env, args...)
		if err != nil {
			t.Fatalf("hangar %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("deposit", "--user", "42", "--amount", "20000")

	out := run("telegram", "send", "--from", "42", "/order sim-nano tokyo")
	quote := regexp.MustCompile(`#(\d+) message to chat 42 \(logged\)\n  Order <b>Simulated nano`).FindStringSubmatch(out)
	if quote == nil || !regexp.MustCompile(`\[1\] ✅ Confirm  \(callback_data oc:[0-9a-f]{16}\)`).MatchString(out) ||
		!strings.Contains(out, "[2] ✖ Cancel") {
		t.Fatalf("send /order did not show the quote with its buttons:\n%s", out)
	}

	// The admin API shows the same message whole, buttons and callback data included.
	r := hangartest.Do(t, http.MethodGet, d.URL+"/admin/outbox", nil, "Authorization", "Bearer "+hangartest.AdminToken)
	var box api.Outbox
	if err := json.Unmarshal(r.Body, &box); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range append(box.Queued, box.Recent...) {
		if strings.Contains(m.Text, "Simulated nano") && len(m.Buttons) == 1 && len(m.Buttons[0]) == 2 &&
			strings.HasPrefix(m.Buttons[0][0].CallbackData, "oc:") && m.Buttons[0][0].Text == "✅ Confirm" {
			found = true
		}
	}
	if !found {
		t.Fatalf("GET /admin/outbox lacks the quote's buttons: %s", r.Body)
	}

	if out, err := hangarCmd(env, "telegram", "press", quote[1], "nosuchbutton"); err == nil || !strings.Contains(out, `"✅ Confirm"`) {
		t.Fatalf("pressing a button that does not exist: %v\n%s", err, out)
	}
	out = run("telegram", "press", quote[1], "confirm")
	created := regexp.MustCompile(`Order <b>#(\d+)</b> received`).FindStringSubmatch(out)
	if created == nil {
		t.Fatalf("press Confirm did not create an order:\n%s", out)
	}
	hangartest.WaitFor(t, 20*time.Second, "the order to become active", func() bool {
		r := hangartest.Do(t, http.MethodGet, d.URL+"/status/"+created[1], nil, "Authorization", "Bearer "+hangartest.WebhookSecret)
		return strings.Contains(string(r.Body), `"status":"active"`)
	})
	// A second press of the same button is refused by the bot, as a double tap is.
	if out := run("telegram", "press", quote[1], "1"); !strings.Contains(out, "already used") {
		t.Fatalf("a second press:\n%s", out)
	}
	if out := run("telegram", "outbox", "--chat", "42"); !strings.Contains(out, "Your server is ready") {
		t.Fatalf("outbox --chat 42 lacks the ready message:\n%s", out)
	}
}
