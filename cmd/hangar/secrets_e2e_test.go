package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// TestRefusedPasswordMessageLeaksNowhere runs hangar serve against a Telegram that
// refuses the "server ready" message and quotes the whole request, password included,
// in its error. The password must not appear in the daemon's output, in any file of
// the data directory (log segments, Badger's tables and value log, the key files), or
// in /admin/outbox; the user is told, and /password sends it again.
func TestRefusedPasswordMessageLeaksNowhere(t *testing.T) {
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	tg.RefuseEchoing(func(text string) bool { return strings.Contains(text, "Your server is ready") })
	dataDir := t.TempDir()
	d := startDaemon(t, dataDir, "HANGAR_BOT_TOKEN="+hangartest.BotToken, "HANGAR_TELEGRAM_API="+tg.URL(),
		"HANGAR_SIM_LATENCY=10ms", "HANGAR_SIM_FAIL_RATE=0")
	d.admin(t, "POST", "/admin/users/77/deposit", []byte(`{"amount":1000000}`), nil)
	r := hangartest.Do(t, "POST", d.URL+"/orders", []byte(`{"user_id":77,"telegram_user_id":"77","spec_id":"sim-nano","region":"tokyo"}`),
		"Authorization", "Bearer "+hangartest.WebhookSecret)
	if r.Status != 201 {
		t.Fatalf("order: %d %s", r.Status, r.Body)
	}
	var order struct {
		OrderID int64 `json:"order_id"`
	}
	r.JSON(t, &order)

	hangartest.WaitFor(t, 20*time.Second, "Telegram to refuse the ready message", func() bool { return len(tg.Refused()) > 0 })
	text := tg.Refused()[0].Text
	_, rest, _ := strings.Cut(text, "<tg-spoiler>")
	pw, _, ok := strings.Cut(rest, "</tg-spoiler>")
	if !ok || len(pw) < 16 {
		t.Fatalf("no password in the refused message %q", text)
	}
	if _, ok := waitText(tg, "/password", 20*time.Second); !ok {
		t.Fatalf("the user was not told how to get the password; messages: %+v", tg.Messages())
	}
	var outbox struct {
		Recent []struct {
			Status    string `json:"status"`
			LastError string `json:"last_error"`
		} `json:"recent"`
	}
	raw := hangartest.Do(t, "GET", d.URL+"/admin/outbox", nil, "Authorization", "Bearer "+hangartest.AdminToken)
	raw.JSON(t, &outbox)
	if strings.Contains(string(raw.Body), pw) {
		t.Errorf("/admin/outbox shows the password: %s", raw.Body)
	}
	if !strings.Contains(string(raw.Body), "can't parse entities") {
		t.Errorf("/admin/outbox does not show the refusal (the test would prove nothing): %s", raw.Body)
	}

	tg.RefuseEchoing(nil)
	if r := hangartest.Do(t, "POST", d.URL+"/webhook", hangartest.Update(1, 77, fmt.Sprintf("/password %d", order.OrderID)),
		"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret); r.Status != 200 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	if _, ok := waitText(tg, pw, 20*time.Second); !ok {
		t.Fatalf("/password did not send the password again; messages: %+v", tg.Messages())
	}

	d.kill() // what a copy of the data directory would hold, the log cut where it stood
	if strings.Contains(d.logs.String(), pw) {
		t.Error("the daemon's output holds the password")
	}
	files, control := 0, false
	err := filepath.WalkDir(dataDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		files++
		hasPw, err := sparseContains(path, []byte(pw))
		if err != nil {
			return err
		}
		if hasPw {
			t.Errorf("%s holds the password", path)
		}
		if plan, _ := sparseContains(path, []byte("sim-nano")); plan {
			control = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !control {
		t.Fatalf("none of %d files holds the order's plan: the grep proves nothing", files)
	}
}

func waitText(tg *telegramfake.Server, want string, timeout time.Duration) (telegramfake.Message, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, m := range tg.Messages() {
			if strings.Contains(m.Text, want) {
				return m, true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return telegramfake.Message{}, false
}

// sparseContains greps a file, reading only its data regions: Badger's value log is a
// large sparse file.
func sparseContains(path string, needle []byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	const seekData, seekHole = 3, 4
	buf := make([]byte, 4<<20)
	var off int64
	for {
		start, err := f.Seek(off, seekData)
		if err != nil {
			return false, nil // no data past off
		}
		end, err := f.Seek(start, seekHole)
		if err != nil {
			return false, err
		}
		for pos := start; pos < end; {
			n, err := f.ReadAt(buf[:min(int64(len(buf)), end-pos)], pos)
			if bytes.Contains(buf[:n], needle) {
				return true, nil
			}
			if err != nil || n == 0 || pos+int64(n) >= end {
				break
			}
			pos += int64(n) - int64(len(needle)-1) // overlap: a match across chunks is seen
		}
		off = end
	}
}
