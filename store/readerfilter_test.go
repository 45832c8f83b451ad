package store

import (
	"testing"
	"time"
)

// The filter may only rule out records that cannot exist: every case where a record
// does exist must still be read, or a reader would be counted twice.
func TestReaderFilterNeverHidesAStoredReader(t *testing.T) {
	type view struct {
		name        string
		at          time.Time
		restart     bool
		wantCounted bool
	}
	noon := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		views []view
	}{
		{"a reader stored before a restart", []view{
			{"first view", noon, false, true},
			{"after a restart, ten minutes later", noon.Add(10 * time.Minute), true, false},
		}},
		{"yesterday's reader stored before a restart just after midnight", []view{
			{"at 23:50", time.Date(2026, 11, 29, 23, 50, 0, 0, time.UTC), false, true},
			{"after a restart at 00:05", time.Date(2026, 11, 30, 0, 5, 0, 0, time.UTC), true, false},
		}},
		{"yesterday's reader written since Open", []view{
			{"at 23:50", time.Date(2026, 11, 29, 23, 50, 0, 0, time.UTC), false, true},
			{"at 00:05", time.Date(2026, 11, 30, 0, 5, 0, 0, time.UTC), false, false},
		}},
		{"a clock set back past the days kept", []view{
			{"first view", noon, false, true},
			{"three days later", noon.Add(72 * time.Hour), false, true},
			{"four days later", noon.Add(96 * time.Hour), false, true},
			{"the clock set back to ten minutes after the first", noon.Add(10 * time.Minute), false, false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clock := &blogClock{}
			s := blogOpen(t, dir, clock)
			defer func() { s.Close() }()
			for _, v := range tc.views {
				if v.restart {
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					s = blogOpen(t, dir, clock)
				}
				clock.Set(v.at)
				res, err := s.RecordView(Hit{Slug: "post", IP: "192.0.2.1"})
				if err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				if res.Counted != v.wantCounted {
					t.Fatalf("%s: counted = %v, want %v", v.name, res.Counted, v.wantCounted)
				}
			}
		})
	}
}
