package engine_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/store"
)

// stuckTelegram sends nothing and answers getMe only when released: Telegram's API
// behind a firewall that drops packets.
type stuckTelegram struct {
	asked, release chan struct{}
	cancelled      chan struct{}
}

func (s *stuckTelegram) Send(context.Context, store.OutboxMessage) error      { return nil }
func (s *stuckTelegram) AnswerCallback(context.Context, string, string) error { return nil }
func (s *stuckTelegram) Enabled() bool                                        { return true }
func (s *stuckTelegram) Username(ctx context.Context) (string, error) {
	close(s.asked)
	select {
	case <-s.release:
		return "hangar_bot", nil
	case <-ctx.Done():
		close(s.cancelled)
		return "", ctx.Err()
	}
}

// Start does not wait for getMe: serve opens the webhook and /health only after it,
// and with Telegram silent every start kept them closed for the wait. The name is
// learned in the background once Telegram answers.
func TestStartDoesNotWaitForGetMe(t *testing.T) {
	st, err := store.Open(store.Options{Dir: filepath.Join(t.TempDir(), "db"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tg := &stuckTelegram{asked: make(chan struct{}), release: make(chan struct{}), cancelled: make(chan struct{})}
	eng, err := engine.New(engine.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(),
		Reconcile: engine.ReconcileConfig{Every: -1}}, st, tg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop(context.Background())
	<-tg.asked
	select {
	case <-tg.cancelled:
		t.Fatal("Start gave up on getMe before it returned: it waited for Telegram")
	default:
	}
	if eng.BotName() != "" {
		t.Fatalf("the name is %q before Telegram answered", eng.BotName())
	}
	close(tg.release)
	deadline := time.Now().Add(5 * time.Second)
	for eng.BotName() != "hangar_bot" {
		if time.Now().After(deadline) {
			t.Fatal("the name was not learned once Telegram answered")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
