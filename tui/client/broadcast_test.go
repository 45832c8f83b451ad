package client_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/tui/client"
)

func wantAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code || ae.Message == "" {
		t.Fatalf("err = %#v, want %d %s with the daemon's sentence", err, status, code)
	}
}

// The console's broadcast calls against the real daemon (Fiber app, engine, store):
// its refusals come back as the daemon words them, a new broadcast is trimmed and
// snapshotted, listed, and announced on the event feed as it progresses, and an
// ended one cannot be cancelled.
func TestBroadcastsAgainstDaemon(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	c, err := client.New(env.URL, hangartest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	events, err := c.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}

	_, err = c.CreateBroadcast(ctx, "hello")
	wantAPIError(t, err, 409, "no_recipients")
	for i, u := range []int64{501, 502, 503} {
		if r := env.PostUpdate(t, hangartest.Update(int64(i+1), u, "/help")); r.Status != 200 {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
	}
	env.Settle(t)
	_, err = c.CreateBroadcast(ctx, " \n\t ")
	wantAPIError(t, err, 400, "bad_text")
	_, err = c.CreateBroadcast(ctx, strings.Repeat("가", 4097))
	wantAPIError(t, err, 400, "bad_text")

	b, err := c.CreateBroadcast(ctx, "  점검 안내\nmaintenance at 03:00  ")
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == 0 || b.Text != "점검 안내\nmaintenance at 03:00" || b.Total != 3 || !b.Active() || b.CreatedAt.IsZero() || b.By == "" {
		t.Fatalf("created %+v", b)
	}
	list, err := c.Broadcasts(ctx, 10)
	if err != nil || len(list) != 1 || list[0].ID != b.ID || list[0].Text != b.Text {
		t.Fatalf("list = %+v, %v", list, err)
	}

	// The feed says so, and then how it went, until every recipient is settled.
	deadline := time.After(15 * time.Second)
	var last api.Broadcast
	for last.State != "done" {
		select {
		case ev := <-events:
			if ev.Type == api.EventBroadcast {
				if ev.Broadcast == nil || ev.Broadcast.ID != b.ID {
					t.Fatalf("broadcast event %+v", ev.Broadcast)
				}
				last = *ev.Broadcast
			}
		case <-deadline:
			t.Fatalf("no broadcast event saying done; last %+v", last)
		}
	}
	if last.Sent != 3 || last.Next != 3 || last.Total != 3 || last.FinishedAt.IsZero() {
		t.Fatalf("done: %+v", last)
	}
	_, err = c.CancelBroadcast(ctx, b.ID)
	wantAPIError(t, err, 409, "conflict")
	_, err = c.CancelBroadcast(ctx, b.ID+100)
	wantAPIError(t, err, 404, "not_found")

	// A second one, cancelled at once: either the cancel lands (nothing more is sent)
	// or it had already finished (409); a second cancel is refused either way.
	b2, err := c.CreateBroadcast(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.CancelBroadcast(ctx, b2.ID); err == nil {
		if got.ID != b2.ID || got.State != "cancelled" {
			t.Fatalf("cancelled %+v", got)
		}
	} else {
		wantAPIError(t, err, 409, "conflict")
	}
	_, err = c.CancelBroadcast(ctx, b2.ID)
	wantAPIError(t, err, 409, "conflict")
}

// The outbox as the console reads it from the real daemon holds a message whole: the
// order question's parse mode and buttons with their callback data, and the answer to
// a press with the callback query it answers.
func TestOutboxMessagesWholeAgainstDaemon(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	c, err := client.New(env.URL, hangartest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if r := env.PostUpdate(t, hangartest.Update(1, 77, "/order sim-nano tokyo")); r.Status != 200 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	env.Settle(t)
	ob, err := c.Outbox(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	var question *api.Message
	for _, m := range append(ob.Queued, ob.Recent...) {
		if len(m.Buttons) > 0 {
			question = &m
			break
		}
	}
	if question == nil || question.ParseMode != "HTML" || len(question.Buttons[0]) != 2 {
		t.Fatalf("no order question with its buttons in %+v", ob)
	}
	cancel := question.Buttons[0][1]
	if cancel.Text == "" || !strings.HasPrefix(cancel.CallbackData, "ox:") {
		t.Fatalf("buttons %+v", question.Buttons)
	}
	if r := env.PostUpdate(t, hangartest.Callback(2, 77, cancel.CallbackData)); r.Status != 200 {
		t.Fatalf("press: %d %s", r.Status, r.Body)
	}
	env.Settle(t)
	ob, err = c.Outbox(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	answered := false
	for _, m := range append(ob.Queued, ob.Recent...) {
		if m.CallbackQueryID == "cb2" && m.Text != "" && m.ChatID == 77 {
			answered = true
		}
	}
	if !answered {
		t.Fatalf("no answer to callback query cb2 in %+v", ob)
	}
}
