package store

import (
	"errors"
	"slices"
	"testing"
)

func TestBroadcastRecipients(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seen     []int64 // through CompleteUpdate, as the webhook path records them
		ordered  []int64 // only in the order index (users from before the seen index)
		blocked  []int64 // answered 403 to an earlier broadcast
		reseen   []int64 // wrote to the bot again after being blocked
		want     []int64
		wantNone bool
	}{
		{name: "nobody yet", wantNone: true},
		{name: "seen users, in id order, once each", seen: []int64{30, 10, 20, 10}, want: []int64{10, 20, 30}},
		{name: "order owners from before the index", seen: []int64{5}, ordered: []int64{12345678901, 5}, want: []int64{5, 12345678901}},
		{name: "blocked users are left out", seen: []int64{1, 2, 3}, blocked: []int64{2}, want: []int64{1, 3}},
		{name: "a blocked order owner is left out too", ordered: []int64{4, 8}, blocked: []int64{8}, want: []int64{4}},
		{name: "writing again unblocks", seen: []int64{1, 2}, blocked: []int64{1, 2}, reseen: []int64{2}, want: []int64{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := quietOpen(t, t.TempDir())
			defer s.Close()
			updateID := int64(0)
			complete := func(users []int64) {
				for _, u := range users {
					updateID++
					id := updateID
					if _, err := s.AcceptUpdate(id, []byte(`{}`)); err != nil {
						t.Fatal(err)
					}
					if _, err := s.CompleteUpdate(UpdateOutcome{UpdateID: id, UserID: u}); err != nil {
						t.Fatal(err)
					}
				}
			}
			complete(tc.seen)
			for i, u := range tc.ordered {
				if err := s.update(func(txn *tx) error { return txn.Set(orderUserKey(u, int64(i+1)), nil) }); err != nil {
					t.Fatal(err)
				}
			}
			if len(tc.blocked) > 0 {
				// An earlier broadcast learnt they blocked the bot.
				prev := seedBroadcast(t, s)
				if _, err := s.SaveBroadcastProgress(BroadcastProgress{ID: prev.ID, Next: prev.Total, Blocked: len(tc.blocked), BlockedUsers: tc.blocked}); err != nil {
					t.Fatal(err)
				}
				for _, u := range tc.blocked {
					if b, err := s.UserBlocked(u); err != nil || !b {
						t.Fatalf("user %d not marked blocked (%v)", u, err)
					}
				}
			}
			for _, u := range tc.reseen {
				if err := s.MarkUsersSeen(u); err != nil {
					t.Fatal(err)
				}
			}
			b, err := s.CreateBroadcast("hello", "admin")
			if tc.wantNone {
				if !errors.Is(err, ErrNoRecipients) {
					t.Fatalf("err = %v, want ErrNoRecipients", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.BroadcastRecipients(b.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || b.Total != len(tc.want) {
				t.Fatalf("recipients %v (total %d), want %v", got, b.Total, tc.want)
			}
		})
	}
}

// seedBroadcast creates a broadcast to whoever is known.
func seedBroadcast(t *testing.T, s *Store) Broadcast {
	t.Helper()
	b, err := s.CreateBroadcast("earlier", "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Progress survives a reopen, recipients read across chunk boundaries from any index,
// and a finished or cancelled broadcast drops its snapshot and refuses a cancel.
func TestBroadcastProgressAndResume(t *testing.T) {
	dir := t.TempDir()
	s := quietOpen(t, dir)
	const n = 2*recipientChunk + 37
	for u := int64(1); u <= n; u++ {
		if err := s.MarkUsersSeen(u); err != nil {
			t.Fatal(err)
		}
	}
	b, err := s.CreateBroadcast("news", "ops")
	if err != nil {
		t.Fatal(err)
	}
	if b.Total != n || b.State != BroadcastQueued {
		t.Fatalf("created %+v", b)
	}
	for _, tc := range []struct{ from, limit, wantLen int }{
		{0, 10, 10}, {recipientChunk - 3, 10, 10}, {n - 5, 100, 5}, {n, 10, 0}, {0, n + 10, n},
	} {
		got, err := s.BroadcastRecipients(b.ID, tc.from, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.wantLen || (len(got) > 0 && got[0] != int64(tc.from+1)) {
			t.Fatalf("from %d limit %d: %d ids starting %v", tc.from, tc.limit, len(got), got[:min(len(got), 1)])
		}
	}
	if b, err = s.SaveBroadcastProgress(BroadcastProgress{ID: b.ID, Next: 600, Sent: 598, Failed: 1, Blocked: 1, BlockedUsers: []int64{7}}); err != nil {
		t.Fatal(err)
	}
	if b.State != BroadcastSending {
		t.Fatalf("state %q after progress", b.State)
	}
	s.Close()

	s = quietOpen(t, dir)
	defer s.Close()
	active, err := s.ActiveBroadcasts()
	if err != nil || len(active) != 1 {
		t.Fatalf("active %v %v", active, err)
	}
	if a := active[0]; a.Next != 600 || a.Sent != 598 || a.Failed != 1 || a.Blocked != 1 {
		t.Fatalf("after reopen %+v", a)
	}
	if blocked, _ := s.UserBlocked(7); !blocked {
		t.Fatal("user 7 not blocked after reopen")
	}
	// A progress commit never moves the resume point back.
	if b, err = s.SaveBroadcastProgress(BroadcastProgress{ID: b.ID, Next: 10}); err != nil || b.Next != 600 {
		t.Fatalf("next moved back to %d (%v)", b.Next, err)
	}
	if b, err = s.SaveBroadcastProgress(BroadcastProgress{ID: b.ID, Next: n, Sent: n - 600}); err != nil {
		t.Fatal(err)
	}
	if b.State != BroadcastDone || b.FinishedAt.IsZero() || b.Sent+b.Failed+b.Blocked != n {
		t.Fatalf("finished %+v", b)
	}
	if rest, _ := s.BroadcastRecipients(b.ID, 0, 10); len(rest) != 0 {
		t.Fatalf("a finished broadcast kept its snapshot: %v", rest)
	}
	if _, err := s.CancelBroadcast(b.ID); !errors.Is(err, ErrBroadcastFinished) {
		t.Fatalf("cancel finished: %v", err)
	}
	if _, err := s.CancelBroadcast(b.ID + 100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cancel unknown: %v", err)
	}

	c, err := s.CreateBroadcast("second", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != n-1 {
		t.Fatalf("second broadcast total %d, want %d (the blocked user left out)", c.Total, n-1)
	}
	if c, err = s.CancelBroadcast(c.ID); err != nil || c.State != BroadcastCancelled {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	// Progress arriving after the cancel is counted but does not revive it.
	if c, err = s.SaveBroadcastProgress(BroadcastProgress{ID: c.ID, Next: 3, Sent: 3}); err != nil || c.State != BroadcastCancelled || c.Sent != 3 {
		t.Fatalf("after cancel: %+v %v", c, err)
	}
	list, err := s.ListBroadcasts(10)
	if err != nil || len(list) != 2 || list[0].ID != c.ID {
		t.Fatalf("list %+v %v", list, err)
	}
}

// The list keeps the newest BroadcastCap broadcasts.
func TestBroadcastCap(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	defer s.Close()
	if err := s.MarkUsersSeen(1); err != nil {
		t.Fatal(err)
	}
	var last Broadcast
	for range BroadcastCap + 5 {
		b, err := s.CreateBroadcast("x", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveBroadcastProgress(BroadcastProgress{ID: b.ID, Next: 1, Sent: 1}); err != nil {
			t.Fatal(err)
		}
		last = b
	}
	list, err := s.ListBroadcasts(1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != BroadcastCap || list[0].ID != last.ID {
		t.Fatalf("kept %d broadcasts (newest %d), want %d (newest %d)", len(list), list[0].ID, BroadcastCap, last.ID)
	}
}
