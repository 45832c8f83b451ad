package engine

import "encoding/json"

// UpdateHeader is what routing needs from a Telegram update. The webhook decodes only
// this (which still validates the whole body as JSON); the user's actor decodes the
// full update, off the request path.
type UpdateHeader struct {
	ID     int64
	UserID int64 // 0 when the update has no sender (channel posts)
	// PreCheckout marks a pre_checkout_query, answered on the webhook's path.
	PreCheckout bool
}

type fromOnly struct {
	From *struct {
		ID int64 `json:"id"`
	} `json:"from"`
}

type headerJSON struct {
	UpdateID      int64     `json:"update_id"`
	Message       *fromOnly `json:"message"`
	EditedMessage *fromOnly `json:"edited_message"`
	CallbackQuery *fromOnly `json:"callback_query"`
	PreCheckout   *fromOnly `json:"pre_checkout_query"`
}

// ParseUpdateHeader decodes an update's id and sender.
func ParseUpdateHeader(raw []byte) (UpdateHeader, error) {
	var h headerJSON
	if err := json.Unmarshal(raw, &h); err != nil {
		return UpdateHeader{}, err
	}
	out := UpdateHeader{ID: h.UpdateID, PreCheckout: h.PreCheckout != nil}
	for _, f := range []*fromOnly{h.Message, h.EditedMessage, h.CallbackQuery, h.PreCheckout} {
		if f != nil && f.From != nil {
			out.UserID = f.From.ID
			break
		}
	}
	return out, nil
}
