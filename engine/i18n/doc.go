// Package i18n holds the bot's message catalogues (Korean and English, TOML files
// embedded in the binary and read by go-i18n) and the one function that formats money
// for a language and a currency. Every text a Telegram user sees is a message id here,
// so that a reply cannot be written in one language only.
package i18n
