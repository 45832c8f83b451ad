package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hangarhq/hangar/http/api"
)

// The offline bot: with sending off (no bot token) Telegram never sees hangar, so these
// commands play its part against a running daemon. What the bot says is read from the
// admin API's outbox; what a user does is posted to the daemon's own /webhook with the
// webhook secret, as Telegram would post it, so it takes the same path as a real
// update (inbox, de-duplication, rate limit, the user's actor).

const pressUsage = `Usage: hangar telegram send [--from USER] TEXT
       hangar telegram outbox [--chat ID] [--limit N]
       hangar telegram press [--from USER] MESSAGE_ID BUTTON

Tries the bot without Telegram, against a running daemon (HANGAR_CONSOLE_ADDR,
HANGAR_ADMIN_TOKEN, HANGAR_WEBHOOK_SECRET):
  send    posts a chat message from USER (default 42) to /webhook, e.g. "/order sim-nano tokyo",
          and prints the bot's answers
  outbox  prints the bot's messages whole, with their buttons and callback data
  press   presses BUTTON (its number, counted from 1, or a word of its text, or its
          callback data) of outbox message MESSAGE_ID as USER (default: the message's chat)
          and prints the bot's answers
`

// offlineBot is what the three commands share: the admin API for the outbox, the
// webhook secret for posting updates.
type offlineBot struct {
	admin  *adminClient
	secret string
	from   int64
}

func offlineFlags(name string) (*flag.FlagSet, *offlineBot) {
	fs, c := adminFlags("telegram " + name)
	fs.SetOutput(os.Stdout)
	b := &offlineBot{admin: c}
	f := &envFlags{fs: fs}
	f.Secret(&b.secret, "webhook-secret", "HANGAR_WEBHOOK_SECRET", "the secret /webhook checks")
	fs.Int64Var(&b.from, "from", 0, "the Telegram user who sends or presses (send: 42; press: the message's chat)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), pressUsage+"\nFlags:\n"); fs.PrintDefaults() }
	return fs, b
}

// runTelegramOffline is `hangar telegram send|outbox|press`.
func runTelegramOffline(cmd string, args []string) error {
	fs, b := offlineFlags(cmd)
	var chat int64
	var limit int
	if cmd == "outbox" {
		fs.Int64Var(&chat, "chat", 0, "only messages to this chat")
		fs.IntVar(&limit, "limit", 20, "at most this many messages, newest first")
	}
	parse := parseArgs
	if cmd == "send" {
		parse = parseTextArgs
	}
	if err := parse(fs, args, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	switch cmd {
	case "send":
		if fs.NArg() == 0 {
			fs.Usage()
			return errors.New("give the message text, e.g. hangar telegram send \"/order sim-nano tokyo\"")
		}
		if b.from == 0 {
			b.from = 42
		}
		return b.send(strings.Join(fs.Args(), " "))
	case "outbox":
		msgs, err := b.messages()
		if err != nil {
			return err
		}
		shown := 0
		for _, m := range msgs {
			if (chat == 0 || m.ChatID == chat) && shown < limit {
				printMessage(os.Stdout, m)
				shown++
			}
		}
		if shown == 0 {
			fmt.Println("no messages")
		}
		return nil
	case "press":
		if fs.NArg() != 2 {
			fs.Usage()
			return errors.New("give MESSAGE_ID and BUTTON")
		}
		id, err := strconv.ParseUint(strings.TrimPrefix(fs.Arg(0), "#"), 10, 64)
		if err != nil {
			return fmt.Errorf("MESSAGE_ID %q is not a number (see hangar telegram outbox)", fs.Arg(0))
		}
		return b.press(id, fs.Arg(1))
	}
	return fmt.Errorf("unknown telegram command %q", cmd)
}

// messages is the outbox, queued and recent, newest first.
func (b *offlineBot) messages() ([]api.Message, error) {
	raw, err := b.admin.do(http.MethodGet, "/admin/outbox?limit=1000", nil)
	if err != nil {
		return nil, err
	}
	// adminClient decodes into a map; go through JSON again for the typed view.
	j, _ := json.Marshal(raw)
	var box api.Outbox
	if err := json.Unmarshal(j, &box); err != nil {
		return nil, fmt.Errorf("GET /admin/outbox: %w", err)
	}
	all := append(box.Queued, box.Recent...)
	seen := map[uint64]bool{}
	out := all[:0]
	for _, m := range all {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	// Newest first: ids are handed out in order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ID > out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

func printMessage(w io.Writer, m api.Message) {
	kind := "message"
	if m.CallbackQueryID != "" {
		kind = "button answer"
	}
	fmt.Fprintf(w, "#%d %s to chat %d (%s)\n", m.ID, kind, m.ChatID, m.Status)
	for _, line := range strings.Split(m.Text, "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
	n := 0
	for _, row := range m.Buttons {
		for _, btn := range row {
			n++
			action := "callback_data " + btn.CallbackData
			if btn.URL != "" {
				action = "url " + btn.URL
			}
			fmt.Fprintf(w, "  [%d] %s  (%s)\n", n, btn.Text, action)
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "  press one: hangar telegram press %d 1\n", m.ID)
	}
}

// findButton picks a button by its number, its callback data, or a word of its text.
func findButton(m api.Message, which string) (api.Button, error) {
	var all []api.Button
	for _, row := range m.Buttons {
		all = append(all, row...)
	}
	if len(all) == 0 {
		return api.Button{}, fmt.Errorf("message #%d has no buttons", m.ID)
	}
	if n, err := strconv.Atoi(which); err == nil {
		if n < 1 || n > len(all) {
			return api.Button{}, fmt.Errorf("message #%d has buttons 1 to %d", m.ID, len(all))
		}
		return all[n-1], nil
	}
	var match []api.Button
	for _, btn := range all {
		if btn.CallbackData == which {
			return btn, nil
		}
		if strings.Contains(strings.ToLower(btn.Text), strings.ToLower(which)) {
			match = append(match, btn)
		}
	}
	if len(match) != 1 {
		names := make([]string, len(all))
		for i, btn := range all {
			names[i] = fmt.Sprintf("%d %q", i+1, btn.Text)
		}
		return api.Button{}, fmt.Errorf("%q names %d buttons of message #%d; its buttons are %s", which, len(match), m.ID, strings.Join(names, ", "))
	}
	return match[0], nil
}

func (b *offlineBot) press(id uint64, which string) error {
	msgs, err := b.messages()
	if err != nil {
		return err
	}
	var m *api.Message
	for i := range msgs {
		if msgs[i].ID == id {
			m = &msgs[i]
		}
	}
	if m == nil {
		return fmt.Errorf("no message #%d in the outbox (see hangar telegram outbox)", id)
	}
	btn, err := findButton(*m, which)
	if err != nil {
		return err
	}
	if btn.CallbackData == "" {
		return fmt.Errorf("button %q opens %s; there is nothing to press offline", btn.Text, btn.URL)
	}
	from := b.from
	if from == 0 {
		from = m.ChatID // a private chat's id is its user's
	}
	updateID := newUpdateID()
	update := map[string]any{
		"update_id": updateID,
		"callback_query": map[string]any{
			"id": fmt.Sprintf("press-%d", updateID), "data": btn.CallbackData, "chat_instance": "hangar-press",
			"from": map[string]any{"id": from, "is_bot": false, "first_name": "hangar press"},
			"message": map[string]any{"message_id": m.ID, "date": time.Now().Unix(),
				"chat": map[string]any{"id": m.ChatID, "type": "private"}},
		},
	}
	fmt.Printf("pressing %q (callback_data %s) of message #%d as user %d\n", btn.Text, btn.CallbackData, id, from)
	return b.post(update, m.ChatID, msgs)
}

func (b *offlineBot) send(text string) error {
	msgs, err := b.messages()
	if err != nil {
		return err
	}
	updateID := newUpdateID()
	update := map[string]any{
		"update_id": updateID,
		"message": map[string]any{
			"message_id": updateID % 1_000_000_000, "date": time.Now().Unix(), "text": text,
			"from": map[string]any{"id": b.from, "is_bot": false, "first_name": "hangar send"},
			"chat": map[string]any{"id": b.from, "type": "private"},
		},
	}
	fmt.Printf("sending %q as user %d\n", text, b.from)
	return b.post(update, b.from, msgs)
}

// post delivers an update to /webhook as Telegram does, then prints what the bot
// answered in chat within a few seconds (the answer is queued after the update is
// acknowledged).
func (b *offlineBot) post(update map[string]any, chat int64, before []api.Message) error {
	if b.secret == "" {
		return errors.New("no webhook secret: set HANGAR_WEBHOOK_SECRET or --webhook-secret (the daemon's)")
	}
	body, _ := json.Marshal(update)
	req, err := http.NewRequest(http.MethodPost, b.admin.url("/webhook"), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", b.secret)
	resp, err := b.admin.http.Do(req)
	if err != nil {
		return fmt.Errorf("daemon unreachable at %s: %w", b.admin.addr, err)
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /webhook: %d %s", resp.StatusCode, strings.TrimSpace(string(answer)))
	}
	var last uint64
	for _, m := range before {
		last = max(last, m.ID)
	}
	deadline := time.Now().Add(5 * time.Second)
	settled := false
	for {
		msgs, err := b.messages()
		if err != nil {
			return err
		}
		var fresh []api.Message
		for _, m := range msgs {
			if m.ID > last && m.ChatID == chat {
				fresh = append(fresh, m)
			}
		}
		if len(fresh) > 0 && !settled {
			// The bot often answers twice (the button's notice, then the chat
			// message): give the second a moment to be queued.
			settled = true
			time.Sleep(300 * time.Millisecond)
			continue
		}
		if len(fresh) > 0 || time.Now().After(deadline) {
			for i := len(fresh) - 1; i >= 0; i-- { // oldest first, as the chat shows them
				printMessage(os.Stdout, fresh[i])
			}
			if len(fresh) == 0 {
				fmt.Println("the update was accepted; no answer yet (see hangar telegram outbox)")
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// newUpdateID is an update_id no earlier press or send has used: the daemon ignores a
// repeated one for a day, as it must for Telegram's re-deliveries.
func newUpdateID() int64 { return time.Now().UnixMicro() }
