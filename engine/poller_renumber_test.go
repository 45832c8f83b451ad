package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// restartedIDs is getUpdates after the bot had no update for a week: Telegram's Bot
// API then numbers the next update at random ("If there are no new updates for at
// least a week, then identifier of the next update will be chosen randomly instead of
// sequentially"), possibly far below the offset the poller holds. Telegram returns it
// all the same (go-telegram-bot-api/telegram-bot-api#156 shows update_id 117314199
// answered to offset 727334708), and keeps returning it until an offset past it
// confirms it.
type restartedIDs struct {
	mu     sync.Mutex
	update json.RawMessage
	id     int64
	n      int
}

func (s *restartedIDs) GetUpdates(ctx context.Context, offset int64, _ time.Duration) ([]json.RawMessage, error) {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	if offset == s.id+1 { // confirmed: a long poll with nothing new
		<-ctx.Done()
		return nil, ctx.Err()
	}
	// Answered at once (the update is waiting); the pause only spares the machine
	// the spin, which is otherwise millions of calls a second.
	time.Sleep(time.Millisecond)
	return []json.RawMessage{s.update}, nil
}

func (s *restartedIDs) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// The poller skips every update whose id is below the offset it holds ("confirmed
// already"), so after Telegram restarts the numbering lower, no update is ever queued
// again, and the poller spins: getUpdates answers at once with the same update.
func TestPollerFollowsUpdateIDsRestartedLower(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	const user = 555
	const oldOffset, newID = 727334708, 117314199
	if err := env.Store.SetTelegramOffset(oldOffset); err != nil {
		t.Fatal(err)
	}
	src := &restartedIDs{update: hangartest.Update(newID, user, "/help"), id: newID}
	p := engine.NewPoller(src, env.Store, env.Engine, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	_, answered := env.Telegram.WaitMessages(1, 2*time.Second)
	cancel()
	<-done
	offset, _ := env.Store.TelegramOffset()
	if !answered || offset != newID+1 {
		t.Fatalf("after Telegram renumbered updates from %d (offset held %d): bot answered=%v, stored offset %d (want %d), getUpdates called %d times in 2s",
			int64(newID), int64(oldOffset), answered, offset, int64(newID+1), src.calls())
	}
}
