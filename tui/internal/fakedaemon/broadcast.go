package fakedaemon

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hangarhq/hangar/http/api"
)

func seedBroadcasts(d *Daemon) {
	d.Recipients = 1250
	d.Casts = []api.Broadcast{
		{ID: 3, Text: "서버 점검 안내: 12월 2일 03:00–04:00 (KST) 동안 새 주문이 늦어질 수 있습니다.\n이용에 불편을 드려 죄송합니다.",
			CreatedAt: Now.Add(-4 * time.Minute), By: "ssh SHA256:q8Zc0Kx3Vb alice@laptop", State: "sending",
			Total: 1250, Sent: 412, Failed: 3, Blocked: 17, Next: 432, UpdatedAt: Now.Add(-time.Second)},
		{ID: 2, Text: "New in Seoul: nano-1 servers from 5,000 KRW. Send /plans to see them.",
			CreatedAt: Now.Add(-50 * time.Hour), By: "admin token", State: "done",
			Total: 1180, Sent: 1150, Failed: 2, Blocked: 28, Next: 1180, UpdatedAt: Now.Add(-49 * time.Hour), FinishedAt: Now.Add(-49 * time.Hour),
			LastError: "telegram: 400 Bad Request: chat not found"},
		{ID: 1, Text: "test broadcast, please ignore", CreatedAt: Now.Add(-120 * time.Hour), By: "admin token", State: "cancelled",
			Total: 1100, Sent: 40, Next: 40, UpdatedAt: Now.Add(-120 * time.Hour), FinishedAt: Now.Add(-120 * time.Hour)},
	}
}

// Broadcasts answers the broadcasts newest first, as the daemon lists them.
func (d *Daemon) Broadcasts(ctx context.Context, limit int) ([]api.Broadcast, error) {
	return answer(d, func() []api.Broadcast { return firstN(d.Casts, limit) }, "Broadcasts")
}

// CreateBroadcast checks and stores a broadcast as the daemon does: the text trimmed,
// 1 to 4096 characters (400 bad_text), someone to send it to (409 no_recipients). It
// is recorded as "CreateBroadcast" and the text quoted; CreatedTexts has the texts as
// they came.
func (d *Daemon) CreateBroadcast(ctx context.Context, text string) (api.Broadcast, error) {
	if err := d.record("CreateBroadcast %q", text); err != nil {
		return api.Broadcast{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.created = append(d.created, text)
	t := strings.TrimSpace(text)
	if t == "" || utf8.RuneCountInString(t) > 4096 {
		return api.Broadcast{}, &api.Error{Status: 400, Code: "bad_text", Message: "the text must be 1 to 4096 characters of UTF-8 after trimming"}
	}
	if d.Recipients == 0 {
		return api.Broadcast{}, &api.Error{Status: 409, Code: "no_recipients", Message: "nobody has talked to the bot yet"}
	}
	var id int64 = 1
	if len(d.Casts) > 0 {
		id = d.Casts[0].ID + 1
	}
	b := api.Broadcast{ID: id, Text: t, CreatedAt: Now, By: d.Who.Actor, State: "queued", Total: d.Recipients, UpdatedAt: Now}
	d.Casts = append([]api.Broadcast{b}, d.Casts...)
	return b, nil
}

// CreatedTexts are the texts CreateBroadcast was given, untouched, oldest first.
func (d *Daemon) CreatedTexts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.created)
}

// CancelBroadcast stops an active broadcast; an unknown one answers 404 and an ended
// one 409, as the daemon does. It is recorded as "CancelBroadcast <id>".
func (d *Daemon) CancelBroadcast(ctx context.Context, id int64) (api.Broadcast, error) {
	if err := d.record("CancelBroadcast %d", id); err != nil {
		return api.Broadcast{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Casts = slices.Clone(d.Casts)
	i := slices.IndexFunc(d.Casts, func(b api.Broadcast) bool { return b.ID == id })
	switch {
	case i < 0:
		return api.Broadcast{}, &api.Error{Status: 404, Code: "not_found", Message: "no such broadcast"}
	case !d.Casts[i].Active():
		return api.Broadcast{}, &api.Error{Status: 409, Code: "conflict", Message: "the broadcast has already finished or been cancelled"}
	}
	b := &d.Casts[i]
	b.State, b.FinishedAt, b.UpdatedAt = "cancelled", Now, Now
	return *b, nil
}

// SetBroadcasts replaces the broadcasts, newest first, as the daemon's would change
// between two reads.
func (d *Daemon) SetBroadcasts(bs ...api.Broadcast) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Casts = bs
}

// SetRecipients is how many users a new broadcast goes to; 0 makes the fake refuse
// one with 409 no_recipients.
func (d *Daemon) SetRecipients(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Recipients = n
}
