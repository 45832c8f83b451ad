package engine

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// scriptedUpdates answers getUpdates with one batch, then nothing, recording every
// offset asked for.
type scriptedUpdates struct {
	mu      sync.Mutex
	batch   []json.RawMessage
	offsets []int64
}

func (s *scriptedUpdates) GetUpdates(ctx context.Context, offset int64, _ time.Duration) ([]json.RawMessage, error) {
	s.mu.Lock()
	s.offsets = append(s.offsets, offset)
	n := len(s.offsets)
	s.mu.Unlock()
	if n == 1 {
		return s.batch, nil
	}
	<-ctx.Done() // a long poll with nothing new
	return nil, ctx.Err()
}

type memOffset struct {
	mu sync.Mutex
	v  int64
}

func (m *memOffset) TelegramOffset() (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.v, nil
}
func (m *memOffset) SetTelegramOffset(v int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.v = v
	return nil
}

type polledUpdates struct{ ids []int64 }

func (q *polledUpdates) QueueUpdate(h UpdateHeader, _ []byte) (bool, error) {
	q.ids = append(q.ids, h.ID)
	return true, nil
}

// An update the header decoder refuses, last in its batch, is confirmed past: the
// poller fetched it again at once, in a loop, until a newer update came.
func TestPollerConfirmsPastAnUpdateThatDoesNotParse(t *testing.T) {
	src := &scriptedUpdates{batch: []json.RawMessage{
		json.RawMessage(`{"update_id":7,"message":{"message_id":1,"date":1,"chat":{"id":5,"type":"private"},"from":{"id":5,"is_bot":false,"first_name":"A"},"text":"hi"}}`),
		json.RawMessage(`{"update_id":8,"message":"not an object"}`),
	}}
	offsets, q := &memOffset{v: 7}, &polledUpdates{}
	p := &Poller{src: src, offsets: offsets, eng: q, log: slog.New(slog.NewTextHandler(io.Discard, nil)), Wait: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(q.ids) != 1 || q.ids[0] != 7 {
		t.Fatalf("queued %v, want update 7 alone", q.ids)
	}
	if len(src.offsets) != 2 || src.offsets[1] != 9 {
		t.Fatalf("getUpdates offsets %v, want 7 then 9 (past the update that does not parse)", src.offsets)
	}
	if v, _ := offsets.TelegramOffset(); v != 9 {
		t.Fatalf("stored offset %d, want 9", v)
	}
}
