package engine

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/hangarhq/hangar/store"
)

const helpText = `<b>hangar</b> creates cloud servers from this chat.

/help — this list
/start — welcome message`

// botReplies answers an update that passed the rate limit.
func botReplies(u *models.Update) []store.OutboxMessage {
	m := u.Message
	if m == nil {
		return nil
	}
	cmd, _ := splitCommand(m.Text)
	switch cmd {
	case "/start":
		name := html.EscapeString(m.From.FirstName)
		return []store.OutboxMessage{htmlMessage(m.Chat.ID, fmt.Sprintf("Hello, %s! 👋\n\n%s", name, helpText))}
	case "/help":
		return []store.OutboxMessage{htmlMessage(m.Chat.ID, helpText)}
	case "":
		return []store.OutboxMessage{htmlMessage(m.Chat.ID, "I only understand commands. Send /help to see them.")}
	default:
		return []store.OutboxMessage{htmlMessage(m.Chat.ID,
			fmt.Sprintf("Unknown command <code>%s</code>. Send /help to see what I can do.", html.EscapeString(cmd)))}
	}
}

// slowDownReply is the one message a user gets when their window fills up.
func slowDownReply(u *models.Update, wait time.Duration) []store.OutboxMessage {
	chat := chatID(u)
	if chat == 0 {
		return nil
	}
	secs := int(wait.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return []store.OutboxMessage{htmlMessage(chat,
		fmt.Sprintf("You are sending messages too fast. Please wait %d seconds; messages until then are ignored.", secs))}
}

func htmlMessage(chatID int64, text string) store.OutboxMessage {
	return store.OutboxMessage{ChatID: chatID, Text: text, ParseMode: string(models.ParseModeHTML)}
}

// splitCommand returns the command word ("/start", without any @botname) and the rest.
func splitCommand(text string) (cmd, args string) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", text
	}
	cmd, args, _ = strings.Cut(text, " ")
	cmd, _, _ = strings.Cut(cmd, "@")
	return strings.ToLower(cmd), strings.TrimSpace(args)
}

func chatID(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		return u.CallbackQuery.Message.Message.Chat.ID
	case u.CallbackQuery != nil:
		return u.CallbackQuery.From.ID
	}
	return 0
}
