package store

import (
	"testing"
	"time"
)

// Audit entries and the pause record outlive a reopen, and the log pages newest first
// from any id.
func TestAuditAndPauseSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	for i := range 5 {
		if _, err := s.AppendAudit(AuditEntry{Actor: "admin token", Role: "operator", Method: "POST",
			Route: "/admin/orders/:id/cancel", Path: "/admin/orders/" + string(rune('1'+i)) + "/cancel", Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	since := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	if err := s.SetQueuePause(QueuePause{Paused: true, Since: since, By: "admin token"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = quietOpen(t, dir)
	defer s.Close()

	p, err := s.QueuePause()
	if err != nil || !p.Paused || !p.Since.Equal(since) || p.By != "admin token" {
		t.Fatalf("pause after reopen = %+v, %v", p, err)
	}
	tests := []struct {
		name          string
		limit         int
		before        uint64
		wantFirstLast []uint64
	}{
		{"newest first", 10, 0, []uint64{5, 1}},
		{"limited", 2, 0, []uint64{5, 4}},
		{"before an id", 10, 4, []uint64{3, 1}},
		{"before the first", 10, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.AuditLog(tt.limit, tt.before)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantFirstLast == nil {
				if len(got) != 0 {
					t.Fatalf("got %d entries, want none", len(got))
				}
				return
			}
			if len(got) == 0 || got[0].ID != tt.wantFirstLast[0] || got[len(got)-1].ID != tt.wantFirstLast[1] {
				t.Fatalf("entries %+v, want ids from %d to %d", got, tt.wantFirstLast[0], tt.wantFirstLast[1])
			}
			if got[0].Route != "/admin/orders/:id/cancel" || got[0].At.IsZero() {
				t.Fatalf("entry = %+v", got[0])
			}
		})
	}
}

// A store never paused reads as running.
func TestQueuePauseDefault(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	p, err := s.QueuePause()
	if err != nil || p.Paused {
		t.Fatalf("fresh store pause = %+v, %v", p, err)
	}
}
