package engine_test

import (
	"encoding/json"
	"testing"

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
