// Package telegram sends messages through the Telegram Bot API (via go-telegram/bot,
// with a configurable base URL so tests can point it at a local fake) and, when no bot
// token is configured, stands in with a sender that is switched off.
package telegram
