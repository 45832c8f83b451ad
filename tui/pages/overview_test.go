package pages

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/tui/common"
	"github.com/hangarhq/hangar/tui/styles"
)

// The overview shows the disk's free space, and an alarm above everything while the
// daemon refuses writes for lack of it.
func TestOverviewShowsTheDisk(t *testing.T) {
	v := NewOverview(&common.Common{St: styles.DefaultStyles(lipgloss.DefaultRenderer())})
	v.SetSize(120, 40)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	v.Update(common.QueueMsg{Stats: api.QueueStats{At: at, Disk: &api.Disk{FreeBytes: 40 << 30, FloorBytes: 512 << 20}}})
	out := v.Render()
	if !strings.Contains(out, "disk 40.0 GiB free, floor 512.0 MiB") || strings.Contains(out, "DISK ALARM") {
		t.Fatalf("a healthy disk:\n%s", out)
	}
	v.Update(common.QueueMsg{Stats: api.QueueStats{At: at.Add(time.Second), Alarms: api.Alarms{Disk: true},
		Disk: &api.Disk{FreeBytes: 300 << 20, FloorBytes: 512 << 20, Refusing: "store: not enough free disk space"}}})
	out = v.Render()
	if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "DISK ALARM: writes refused") {
		t.Fatalf("a full disk, first line %q:\n%s", first, out)
	}
}

// A recent webhook delivery error is an alarm line above the cards, naming the error
// and what waits at Telegram.
func TestOverviewShowsTelegramDeliveryErrors(t *testing.T) {
	v := NewOverview(&common.Common{St: styles.DefaultStyles(lipgloss.DefaultRenderer())})
	v.SetSize(160, 40)
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	v.Update(common.QueueMsg{Stats: api.QueueStats{At: at, Alarms: api.Alarms{Telegram: true},
		Telegram: &api.TelegramWebhook{URL: "https://bot.example.com/webhook", PendingUpdates: 12,
			LastError: "Wrong response from the webhook: 502 Bad Gateway", LastErrorAt: at.Add(-2 * time.Minute)}}})
	out := v.Render()
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "TELEGRAM ALARM") || !strings.Contains(first, "502 Bad Gateway") || !strings.Contains(first, "12 updates waiting") {
		t.Fatalf("first line %q:\n%s", first, out)
	}
	if !strings.Contains(out, "telegram: 12 waiting") {
		t.Fatalf("no telegram figure in the snapshot line:\n%s", out)
	}
}
