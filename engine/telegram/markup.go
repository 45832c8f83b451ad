package telegram

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Button is an inline keyboard button as the Bot API wants it: its text and exactly
// one action. hangar encodes its own type because go-telegram/bot's
// models.InlineKeyboardButton has a non-pointer CopyText that encoding/json never
// omits, so every button it encodes carries "copy_text":{"text":""} beside its real
// action, and Telegram refuses such buttons (BUTTON_COPY_TEXT_INVALID).
type Button struct {
	Text         string    `json:"text"`
	CallbackData string    `json:"callback_data,omitempty"`
	URL          string    `json:"url,omitempty"`
	CopyText     *CopyText `json:"copy_text,omitempty"`
}

// CopyText is the copy_text action's payload.
type CopyText struct {
	Text string `json:"text"`
}

// Keyboard is an inline_keyboard reply markup.
type Keyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

// ErrBadMarkup is returned for a reply markup no Telegram client would accept.
var ErrBadMarkup = errors.New("telegram: invalid reply markup")

// actions counts a button's action fields.
func (b Button) actions() int {
	n := 0
	for _, set := range []bool{b.CallbackData != "", b.URL != "", b.CopyText != nil} {
		if set {
			n++
		}
	}
	return n
}

// Markup encodes rows of buttons as a reply_markup, refusing a button without text or
// without exactly one action.
func Markup(rows ...[]Button) (json.RawMessage, error) {
	kb := Keyboard{InlineKeyboard: rows}
	if err := kb.check(); err != nil {
		return nil, err
	}
	return json.Marshal(kb)
}

// ParseMarkup reads a stored reply_markup into a keyboard the Bot API accepts. Messages
// queued before hangar encoded its own buttons carry an empty copy_text beside their
// callback_data: that empty action is dropped, as it never meant anything.
func ParseMarkup(raw []byte) (Keyboard, error) {
	var kb Keyboard
	if err := json.Unmarshal(raw, &kb); err != nil {
		return Keyboard{}, fmt.Errorf("%w: %v", ErrBadMarkup, err)
	}
	for _, row := range kb.InlineKeyboard {
		for i := range row {
			if row[i].CopyText != nil && row[i].CopyText.Text == "" {
				row[i].CopyText = nil
			}
		}
	}
	return kb, kb.check()
}

func (kb Keyboard) check() error {
	for r, row := range kb.InlineKeyboard {
		for i, b := range row {
			switch {
			case b.Text == "":
				return fmt.Errorf("%w: button %d of row %d has no text", ErrBadMarkup, i+1, r+1)
			case b.actions() != 1:
				return fmt.Errorf("%w: button %q has %d actions; Telegram wants exactly one", ErrBadMarkup, b.Text, b.actions())
			case len(b.CallbackData) > 64:
				return fmt.Errorf("%w: button %q has callback_data over Telegram's 64 bytes", ErrBadMarkup, b.Text)
			}
		}
	}
	return nil
}
