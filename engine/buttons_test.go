package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// buttonActions are the Bot API's InlineKeyboardButton action fields: a button must
// carry exactly one of them.
var buttonActions = []string{"url", "callback_data", "web_app", "login_url", "switch_inline_query",
	"switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text", "callback_game", "pay"}

// The confirm keyboard is read from the sendMessage request the Telegram fake
// received, not from what hangar meant to send: the encoding on the wire is what
// Telegram judges (it refused buttons with an empty copy_text beside callback_data).
func TestEveryButtonOnTheWireHasTextAndOneAction(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	var id int64 = 10
	c := chat{t: t, env: env, user: 77, next: &id}
	c.send("/order sim-nano tokyo")
	quote := c.expect(`a month\?`)
	var kb struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(quote.ReplyMarkup), &kb); err != nil || len(kb.InlineKeyboard) == 0 {
		t.Fatalf("reply_markup is not an inline keyboard: %v %q", err, quote.ReplyMarkup)
	}
	buttons := 0
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			buttons++
			var text string
			if err := json.Unmarshal(b["text"], &text); err != nil || text == "" {
				t.Errorf("button without text: %s", quote.ReplyMarkup)
			}
			var present []string
			for _, a := range buttonActions {
				if _, ok := b[a]; ok {
					present = append(present, a)
				}
			}
			if len(present) != 1 {
				t.Errorf("button %q has actions %v; want exactly one (%s)", text, present, quote.ReplyMarkup)
			}
			for k := range b {
				if k != "text" && len(present) == 1 && k != present[0] {
					t.Errorf("button %q has an unexpected field %q", text, k)
				}
			}
		}
	}
	if buttons != 2 {
		t.Fatalf("want Confirm and Cancel, got %d buttons: %s", buttons, quote.ReplyMarkup)
	}
}

// The console's live outbox replaces a listed message with its "message" event: the
// event carries the buttons as GET /admin/outbox does, or they would vanish from view.
func TestMessageEventsCarryTheButtons(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	req, _ := http.NewRequest(http.MethodGet, env.URL+"/admin/events", nil)
	req.Header.Set("Authorization", "Bearer "+hangartest.AdminToken)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var id int64 = 10
	c := chat{t: t, env: env, user: 77, next: &id}
	c.send("/order sim-nano tokyo")
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			event = name
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || event != "message" {
			continue
		}
		var m api.Message
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(m.Text, "a month?") {
			continue
		}
		if len(m.Buttons) != 1 || len(m.Buttons[0]) != 2 || !strings.HasPrefix(m.Buttons[0][0].CallbackData, "oc:") {
			t.Fatalf("the quote's message event lacks its buttons: %s", data)
		}
		return
	}
	t.Fatalf("no message event for the quote: %v", sc.Err())
}
