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

// The order detail shows the paid time (issue 17): nothing before the server is
// active, then until when and which period, and what a suspended one waits for.
func TestOrderDetailShowsThePaidTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	c := &common.Common{St: styles.DefaultStyles(lipgloss.DefaultRenderer()), Now: func() time.Time { return now }}
	tests := []struct {
		name     string
		o        api.Order
		want     []string
		wantNone []string
	}{
		{name: "pending", o: api.Order{Status: "pending", AutoRenew: true}, wantNone: []string{"paid until", "period"}},
		{name: "active", o: api.Order{Status: "active", PaidUntil: at(72 * time.Hour), Period: 2, AutoRenew: true},
			want: []string{"paid until", "2026-12-04 09:00", "in 3d", "period", "2"}, wantNone: []string{"auto-renew off", "deleted at"}},
		{name: "ending", o: api.Order{Status: "active", PaidUntil: at(time.Hour), Period: 1},
			want: []string{"auto-renew off: ends then"}},
		{name: "suspended", o: api.Order{Status: "suspended", PaidUntil: at(-time.Hour), Period: 3, AutoRenew: true,
			GraceUntil: at(71 * time.Hour), Operation: "power_off"},
			want: []string{"ago", "deleted at", "2026-12-04 08:00", "power_off queued"}},
		{name: "off", o: api.Order{Status: "suspended", PaidUntil: at(-time.Hour), Period: 3, AutoRenew: true,
			GraceUntil: at(time.Hour), PoweredOff: true}, want: []string{"power", "off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := orderDetail(c, tt.o, 120)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("detail lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(out, w) {
					t.Errorf("detail shows %q:\n%s", w, out)
				}
			}
		})
	}
}
