package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// TestCrashKeepsWindowAndAnswersEveryUpdateOnce kills hangar with SIGKILL while updates
// are acknowledged but not yet answered, restarts it on the same data directory, and
// checks that every acknowledged update is answered exactly once and the user's
// rate-limit window survived.
func TestCrashKeepsWindowAndAnswersEveryUpdateOnce(t *testing.T) {
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	// Telegram is down during the first run, so no reply can be half-sent when the
	// process dies: each one is either in the outbox or not yet decided.
	tg.SetDown(true)
	dataDir := t.TempDir()
	env := []string{"HANGAR_BOT_TOKEN=" + hangartest.BotToken, "HANGAR_TELEGRAM_API=" + tg.URL(), "HANGAR_RATE_LIMIT=30", "HANGAR_RATE_WINDOW=10m"}

	d := startDaemon(t, dataDir, env...)
	const user, others = 500, 20
	var updateID int64
	post := func(d *daemon, user int64, text string) {
		t.Helper()
		updateID++
		r := hangartest.Do(t, "POST", d.URL+"/webhook", hangartest.Update(updateID, user, text),
			"X-Telegram-Bot-Api-Secret-Token", hangartest.WebhookSecret)
		if r.Status != 200 {
			t.Fatalf("update %d: %d %s", updateID, r.Status, r.Body)
		}
	}
	// Each text is unique, so each reply names the update it answers.
	for i := range 20 {
		post(d, user, fmt.Sprintf("/u%d", i))
	}
	for i := range others {
		post(d, int64(1000+i), fmt.Sprintf("/o%d", i))
	}
	d.kill()

	tg.SetDown(false)
	d = startDaemon(t, dataDir, env...)
	// The killed process left its write-ahead log; the new one replayed it, and says so.
	if !strings.Contains(d.logs.String(), "replayed the write-ahead log") {
		t.Errorf("no replay of the write-ahead log in the restarted daemon's log:\n%s", d.logs.String())
	}
	metrics := string(hangartest.Do(t, "GET", d.URL+"/metrics", nil).Body)
	for _, name := range []string{"hangar_store_log_commits_total", "hangar_store_log_syncs_total", "hangar_store_log_sync_seconds_total", "hangar_store_overlay_entries", "hangar_store_commit_queue_seconds_bucket", "hangar_store_commit_durable_seconds_count", "hangar_store_log_sync_duration_seconds_sum"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	want := 20 + others
	if _, ok := tg.WaitMessages(want, 60*time.Second); !ok {
		t.Fatalf("after restart %d of %d replies arrived\n%s", len(tg.Messages()), want, d.logs.String())
	}
	// The same user's window continues: 10 more pass, the 11th is told to slow down.
	for i := 20; i < 31; i++ {
		post(d, user, fmt.Sprintf("/u%d", i))
	}
	want += 11
	if _, ok := tg.WaitMessages(want, 60*time.Second); !ok {
		t.Fatalf("got %d of %d replies\n%s", len(tg.Messages()), want, d.logs.String())
	}
	// Give a stray duplicate the chance to show up before counting.
	time.Sleep(500 * time.Millisecond)

	seen := map[string]int{}
	slowDowns := 0
	for _, m := range tg.Messages() {
		if strings.Contains(m.Text, "too fast") {
			slowDowns++
			continue
		}
		start := strings.Index(m.Text, "<code>")
		end := strings.Index(m.Text, "</code>")
		if start < 0 || end < start {
			t.Fatalf("unexpected reply %q", m.Text)
		}
		seen[fmt.Sprintf("%d %s", m.ChatID, m.Text[start+6:end])]++
	}
	for key, n := range seen {
		if n != 1 {
			t.Errorf("%s answered %d times", key, n)
		}
	}
	if len(seen) != 30+others || slowDowns != 1 {
		t.Fatalf("answered %d distinct updates and %d slow-downs; want %d and 1", len(seen), slowDowns, 30+others)
	}
}
