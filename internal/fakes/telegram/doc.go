// Package telegramfake is a local stand-in for the Telegram Bot API: it speaks the real
// wire format (multipart or JSON requests to /bot<token>/<method>, {"ok": …} answers),
// records every accepted sendMessage, and can be told to answer 429 with retry_after or
// to be down. Tests point hangar's --telegram-api at it.
package telegramfake
