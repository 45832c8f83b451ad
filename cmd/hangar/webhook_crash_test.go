package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// postWebhook posts an update and reports the answer, or ok false when the daemon
// died before answering.
func postWebhook(client *http.Client, url string, body []byte) (status int, answer []byte, ok bool) {
	req, err := http.NewRequest(http.MethodPost, url+"/webhook", bytes.NewReader(body))
	if err != nil {
		return 0, nil, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err == nil
}

// TestWebhookKillAroundTheCommitAnswersEachUpdateOnce kills hangar with SIGKILL while
// webhook updates are in flight: some committed and answered, some committed but not
// yet answered when the process died (the kill between the commit and the answer),
// some not committed. Telegram then delivers every update again (it re-delivers
// anything not answered 200; here the answered ones too). Each update must be
// answered exactly once, each answered one must come back a duplicate, and each user's
// window must hold each update once.
func TestWebhookKillAroundTheCommitAnswersEachUpdateOnce(t *testing.T) {
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	// Telegram is down during the first run: a reply is either in the outbox or not
	// yet decided when the process dies, never half-sent.
	tg.SetDown(true)
	const users, perUser = 4, 12
	dataDir := t.TempDir()
	env := []string{"HANGAR_BOT_TOKEN=" + hangartest.BotToken, "HANGAR_TELEGRAM_API=" + tg.URL(),
		fmt.Sprintf("HANGAR_RATE_LIMIT=%d", perUser+1), "HANGAR_RATE_WINDOW=1h"}
	update := func(u, i int) (int64, []byte) {
		id := int64(u*100 + i + 1)
		return id, hangartest.Update(id, int64(7000+u), fmt.Sprintf("/w%dx%d", u, i))
	}

	d := startDaemon(t, dataDir, env...)
	client := &http.Client{Timeout: 30 * time.Second}
	var answered atomic.Int64
	acked := make([][]bool, users)
	var wg sync.WaitGroup
	for u := range users {
		acked[u] = make([]bool, perUser)
		wg.Add(1)
		go func() { // one chat's updates one after another, as Telegram sends them
			defer wg.Done()
			for i := range perUser {
				_, body := update(u, i)
				status, _, ok := postWebhook(client, d.URL, body)
				if !ok {
					return
				}
				acked[u][i] = status == http.StatusOK
				answered.Add(1)
			}
		}()
	}
	hangartest.WaitFor(t, 60*time.Second, "half the updates answered", func() bool { return answered.Load() >= users*perUser/2 })
	d.kill()
	wg.Wait()

	tg.SetDown(false)
	d = startDaemon(t, dataDir, env...)
	var wasAcked, committedUnanswered, fresh int
	for u := range users {
		for i := range perUser {
			id, body := update(u, i)
			status, answer, ok := postWebhook(client, d.URL, body)
			if !ok || status != http.StatusOK {
				t.Fatalf("re-delivery of update %d: %d %s", id, status, answer)
			}
			dup := bytes.Contains(answer, []byte(`"duplicate":true`))
			switch {
			case acked[u][i] && !dup:
				t.Errorf("update %d was answered 200 before the kill but processed again after it", id)
			case acked[u][i]:
				wasAcked++
			case dup:
				committedUnanswered++
			default:
				fresh++
			}
		}
	}
	t.Logf("before the kill: %d answered; committed but unanswered: %d; processed only after the restart: %d", wasAcked, committedUnanswered, fresh)

	want := users * perUser
	if _, ok := tg.WaitMessages(want, 60*time.Second); !ok {
		t.Fatalf("after the restart %d of %d replies arrived\n%s", len(tg.Messages()), want, d.logs.String())
	}
	// Each window holds perUser updates of perUser+1: one more passes, the next is
	// told to slow down. An update counted twice would show as an early slow-down.
	for u := range users {
		for i := perUser; i < perUser+2; i++ {
			_, body := update(u, i)
			if status, answer, ok := postWebhook(client, d.URL, body); !ok || status != http.StatusOK {
				t.Fatalf("update after the restart: %d %s", status, answer)
			}
		}
	}
	want += 2 * users
	if _, ok := tg.WaitMessages(want, 60*time.Second); !ok {
		t.Fatalf("got %d of %d replies\n%s", len(tg.Messages()), want, d.logs.String())
	}
	// Give a stray duplicate the chance to show up before counting.
	time.Sleep(500 * time.Millisecond)

	seen := map[string]int{}
	slowDowns := map[int64]int{}
	for _, m := range tg.Messages() {
		if strings.Contains(m.Text, "too fast") {
			slowDowns[m.ChatID]++
			continue
		}
		start, end := strings.Index(m.Text, "<code>"), strings.Index(m.Text, "</code>")
		if start < 0 || end < start {
			t.Fatalf("unexpected reply %q", m.Text)
		}
		seen[m.Text[start+6:end]]++
	}
	for u := range users {
		for i := range perUser + 1 {
			if key := fmt.Sprintf("/w%dx%d", u, i); seen[key] != 1 {
				t.Errorf("%s answered %d times, want once", key, seen[key])
			}
		}
		if n := slowDowns[int64(7000+u)]; n != 1 {
			t.Errorf("user %d told to slow down %d times, want once (after exactly %d updates)", 7000+u, n, perUser+1)
		}
	}
	if len(seen) != users*(perUser+1) {
		t.Errorf("answered %d distinct updates, want %d", len(seen), users*(perUser+1))
	}
}
