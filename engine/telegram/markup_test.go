package telegram

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestMarkup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		buttons []Button
		want    string
		err     bool
	}{
		{"callback", []Button{{Text: "OK", CallbackData: "oc:1"}}, `{"inline_keyboard":[[{"text":"OK","callback_data":"oc:1"}]]}`, false},
		{"url", []Button{{Text: "Docs", URL: "https://example.com"}}, `{"inline_keyboard":[[{"text":"Docs","url":"https://example.com"}]]}`, false},
		{"no text", []Button{{CallbackData: "x"}}, "", true},
		{"no action", []Button{{Text: "x"}}, "", true},
		{"two actions", []Button{{Text: "x", CallbackData: "x", URL: "https://example.com"}}, "", true},
		{"callback data too long", []Button{{Text: "x", CallbackData: string(make([]byte, 65))}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Markup(tc.buttons)
			if tc.err {
				if !errors.Is(err, ErrBadMarkup) {
					t.Fatalf("want ErrBadMarkup, got %v (%s)", err, got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// Messages queued by an older hangar hold go-telegram/bot's encoding: an empty
// copy_text beside the callback_data. They are sent without it.
func TestParseMarkupDropsTheEmptyCopyTextOfOlderMessages(t *testing.T) {
	for _, tc := range []struct {
		name, stored, want string
		err                bool
	}{
		{"older encoding", `{"inline_keyboard":[[{"text":"✅ Confirm","callback_data":"oc:1","copy_text":{"text":""}}]]}`,
			`{"inline_keyboard":[[{"text":"✅ Confirm","callback_data":"oc:1"}]]}`, false},
		{"current encoding", `{"inline_keyboard":[[{"text":"x","callback_data":"y"}]]}`, `{"inline_keyboard":[[{"text":"x","callback_data":"y"}]]}`, false},
		{"a real copy_text", `{"inline_keyboard":[[{"text":"copy","copy_text":{"text":"abc"}}]]}`, `{"inline_keyboard":[[{"text":"copy","copy_text":{"text":"abc"}}]]}`, false},
		{"two real actions", `{"inline_keyboard":[[{"text":"x","callback_data":"y","copy_text":{"text":"abc"}}]]}`, "", true},
		{"not json", `{`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kb, err := ParseMarkup([]byte(tc.stored))
			if tc.err {
				if !errors.Is(err, ErrBadMarkup) {
					t.Fatalf("want ErrBadMarkup, got %v", err)
				}
				return
			}
			got, _ := json.Marshal(kb)
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
