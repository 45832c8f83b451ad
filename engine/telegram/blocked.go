package telegram

import (
	"strings"

	tgbot "github.com/go-telegram/bot"
)

// Blocked reports Telegram's 403 for a chat: the user blocked the bot, deleted their
// account, or never opened a chat with it. Broadcasts mark such users and skip them
// until they write to the bot again. classify keeps only the text of go-telegram/bot's
// error, which starts with its ErrorForbidden ("forbidden, Forbidden: bot was
// blocked by the user").
func (e *Error) Blocked() bool {
	return e.permanent && strings.HasPrefix(e.err.Error(), tgbot.ErrorForbidden.Error()+",")
}
