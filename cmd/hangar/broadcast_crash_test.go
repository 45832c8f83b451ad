package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// TestBroadcastSurvivesSIGKILL kills hangar with SIGKILL in the middle of a broadcast,
// restarts it on the same data directory, and checks that the rest is sent: every
// user gets the message, and no more users than --broadcast-batch (the documented
// window: those settled since the last progress commit) get it twice.
func TestBroadcastSurvivesSIGKILL(t *testing.T) {
	t.Parallel() // a subprocess's waits, overlapped with another's
	const (
		users = 600
		batch = 10
		text  = "broadcast across a crash"
	)
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	dataDir := t.TempDir()
	env := []string{"HANGAR_BOT_TOKEN=" + hangartest.BotToken, "HANGAR_TELEGRAM_API=" + tg.URL(),
		"HANGAR_TELEGRAM_RATE=400", "HANGAR_BROADCAST_RATE=200", fmt.Sprintf("HANGAR_BROADCAST_BATCH=%d", batch)}
	d := startDaemon(t, dataDir, env...)

	// The users talk to the bot through the webhook: that is how it learns of them.
	var wg sync.WaitGroup
	errs := make(chan string, users)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := w; u < users; u += 8 {
				r := hangartest.Do(t, "POST", d.URL+"/webhook", hangartest.Update(int64(u+1), int64(10000+u), "/help"),
					"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret)
				if r.Status != 200 {
					errs <- fmt.Sprintf("update for user %d: %d %s", 10000+u, r.Status, r.Body)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	// Every reply sent means every update was processed and its user recorded.
	if _, ok := tg.WaitMessages(users, 60*time.Second); !ok {
		t.Fatalf("%d of %d replies arrived\n%s", len(tg.Messages()), users, d.logs.String())
	}
	replies := len(tg.Messages())

	r := hangartest.Do(t, "POST", d.URL+"/admin/broadcast", []byte(`{"text":"`+text+`"}`), "Authorization", "Bearer "+hangartest.AdminToken)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var b store.Broadcast
	if err := json.Unmarshal(r.Body, &b); err != nil || b.Total != users {
		t.Fatalf("created %s (%v): want %d recipients", r.Body, err, users)
	}
	if _, ok := tg.WaitMessages(replies+users/3, 30*time.Second); !ok {
		t.Fatalf("the broadcast did not get going\n%s", d.logs.String())
	}
	d.kill()
	before := len(tg.Messages()) - replies
	if before >= users {
		t.Fatalf("the whole broadcast went out before the kill (%d); slow it down", before)
	}

	d = startDaemon(t, dataDir, env...)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := hangartest.Do(t, "GET", fmt.Sprintf("%s/admin/broadcast/%d", d.URL, b.ID), nil, "Authorization", "Bearer "+hangartest.AdminToken)
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if !b.Active() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broadcast did not finish after the restart: %+v\n%s", b, d.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b.State != store.BroadcastDone || b.Sent != users || b.Failed+b.Blocked != 0 {
		t.Fatalf("finished as %+v", b)
	}
	got := map[int64]int{}
	for _, m := range tg.Messages() {
		if m.Text == text {
			got[m.ChatID]++
		}
	}
	twice := 0
	for u := range users {
		switch n := got[int64(10000+u)]; {
		case n == 0:
			t.Fatalf("user %d never got the broadcast (%d sent before the kill)", 10000+u, before)
		case n == 2:
			twice++
		case n > 2:
			t.Fatalf("user %d got the broadcast %d times", 10000+u, n)
		}
	}
	if twice > batch {
		t.Fatalf("%d users got the broadcast twice; the window is --broadcast-batch=%d", twice, batch)
	}
	t.Logf("sent before the kill: %d; repeated after the restart: %d (window %d)", before, twice, batch)
}
