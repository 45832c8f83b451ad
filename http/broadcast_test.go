package http_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

func decodeBroadcast(t *testing.T, r hangartest.Response) store.Broadcast {
	t.Helper()
	var b store.Broadcast
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("%d %s: %v", r.Status, r.Body, err)
	}
	return b
}

// The broadcast routes end to end over a real socket: users who talked to the bot
// through the webhook get the message once each; validation, auth and unknown ids
// answer JSON errors.
func TestBroadcastAPI(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	if r := env.Admin(t, http.MethodPost, "/admin/broadcast", []byte(`{"text":"hi"}`)); r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "no_recipients") {
		t.Fatalf("before anyone talked to the bot: %d %s", r.Status, r.Body)
	}
	users := []int64{501, 502, 503}
	for i, u := range users {
		if r := env.PostUpdate(t, hangartest.Update(int64(i+1), u, "/help")); r.Status != 200 {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
	}
	env.Settle(t)

	long := strings.Repeat("한", 4096)
	for _, tc := range []struct {
		name   string
		method string
		path   string
		body   string
		noAuth bool
		status int
		code   string
	}{
		{"no bearer", "POST", "/admin/broadcast", `{"text":"x"}`, true, 401, "unauthorized"},
		{"empty body", "POST", "/admin/broadcast", ``, false, 400, "empty_body"},
		{"not json", "POST", "/admin/broadcast", `text=hi`, false, 400, "malformed_json"},
		{"no text", "POST", "/admin/broadcast", `{}`, false, 400, "missing_text"},
		{"text not a string", "POST", "/admin/broadcast", `{"text":5}`, false, 400, "invalid_field"},
		{"blank text", "POST", "/admin/broadcast", `{"text":" \n\t "}`, false, 400, "bad_text"},
		{"too long", "POST", "/admin/broadcast", `{"text":"` + long + `x"}`, false, 400, "bad_text"},
		{"unknown id", "GET", "/admin/broadcast/999", ``, false, 404, "not_found"},
		{"bad id", "GET", "/admin/broadcast/abc", ``, false, 400, "bad_id"},
		{"cancel unknown", "POST", "/admin/broadcast/999/cancel", ``, false, 404, "not_found"},
		{"bad limit", "GET", "/admin/broadcast?limit=0", ``, false, 400, "bad_limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r hangartest.Response
			if tc.noAuth {
				r = hangartest.Do(t, tc.method, env.URL+tc.path, []byte(tc.body))
			} else {
				r = env.Admin(t, tc.method, tc.path, []byte(tc.body))
			}
			var e struct{ Error, Code string }
			if r.Status != tc.status || json.Unmarshal(r.Body, &e) != nil || e.Code != tc.code || e.Error == "" {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, tc.status, tc.code)
			}
		})
	}

	r := env.Admin(t, http.MethodPost, "/admin/broadcast", []byte(`{"text":"  `+long+`  "}`))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	b := decodeBroadcast(t, r)
	if b.Total != len(users) || b.Text != long || b.By != "admin token" || b.CreatedAt.IsZero() {
		t.Fatalf("created %+v", b)
	}
	hangartest.WaitFor(t, 10*time.Second, "the broadcast to finish", func() bool {
		return decodeBroadcast(t, env.Admin(t, http.MethodGet, fmt.Sprintf("/admin/broadcast/%d", b.ID), nil)).State == store.BroadcastDone
	})
	got := map[int64]int{}
	for _, m := range env.Telegram.Messages() {
		if m.Text == long {
			got[m.ChatID]++
		}
	}
	for _, u := range users {
		if got[u] != 1 {
			t.Fatalf("user %d got the broadcast %d times", u, got[u])
		}
	}
	if r := env.Admin(t, http.MethodPost, fmt.Sprintf("/admin/broadcast/%d/cancel", b.ID), nil); r.Status != http.StatusConflict {
		t.Fatalf("cancel a finished broadcast: %d %s", r.Status, r.Body)
	}
	var list struct{ Broadcasts []store.Broadcast }
	r = env.Admin(t, http.MethodGet, "/admin/broadcast", nil)
	if err := json.Unmarshal(r.Body, &list); err != nil || len(list.Broadcasts) != 1 || list.Broadcasts[0].Sent != len(users) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
}

// FuzzBroadcastBody sends arbitrary bodies to POST /admin/broadcast: the answer is 201
// exactly when the body is a JSON object whose text trims to 1-4096 characters, and
// the broadcast holds that trimmed text; anything else is a 4xx JSON error that
// stores nothing.
func FuzzBroadcastBody(f *testing.F) {
	for _, seed := range []string{
		`{"text":"hello"}`, `{"text":""}`, `{"text":"   "}`, `{"text":null}`, `{"text":5}`, `{"text":["a"]}`,
		`{}`, `[]`, `null`, ``, `"text"`, `{"text":"a","text":"b"}`, `{"TEXT":"case"}`, `{"text":"\u0000"}`,
		`{"text":"\ud800"}`, "{\"text\":\"\xff\xfe\"}", `{"text":"a"}trailing`, `{"text":"a"`, "\x00",
		`{"text":"` + strings.Repeat("가", 4096) + `"}`, `{"text":"` + strings.Repeat("a", 4097) + `"}`,
	} {
		f.Add([]byte(seed))
	}
	env := hangartest.Start(f, hangartest.Options{})
	if err := env.Store.MarkUsersSeen(1); err != nil {
		f.Fatal(err)
	}
	count := func(t *testing.T) int {
		list, err := env.Store.ListBroadcasts(store.BroadcastCap)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		before := count(t)
		r := env.Admin(t, http.MethodPost, "/admin/broadcast", body)
		var req struct{ Text *string }
		valid := json.Unmarshal(body, &req) == nil && req.Text != nil
		var want string
		if valid {
			want = strings.TrimSpace(*req.Text)
			valid = want != "" && utf8.RuneCountInString(want) <= 4096
		}
		if r.Status == http.StatusCreated {
			if !valid {
				t.Fatalf("body %q was accepted (%s)", body, r.Body)
			}
			if b := decodeBroadcast(t, r); b.Text != want {
				t.Fatalf("body %q stored text %q, want %q", body, b.Text, want)
			}
			return
		}
		if valid {
			t.Fatalf("body %q is valid but answered %d %s", body, r.Status, r.Body)
		}
		var e struct{ Error, Code string }
		if r.Status < 400 || r.Status >= 500 || json.Unmarshal(r.Body, &e) != nil || e.Error == "" || e.Code == "" {
			t.Fatalf("body %q: answer %d %s is not a client JSON error", body, r.Status, r.Body)
		}
		if after := count(t); after != before && before < store.BroadcastCap {
			t.Fatalf("body %q was refused (%d) but a broadcast was stored", body, r.Status)
		}
	})
}
