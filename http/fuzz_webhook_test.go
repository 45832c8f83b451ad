package http_test

import (
	"encoding/json"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// FuzzWebhookUpdate posts arbitrary bodies to /webhook. Every answer is 200 {"ok":true}
// or a JSON 4xx error, never a 5xx; and whatever was accepted, the user's actor that
// decodes the whole update and runs its command never panics.
func FuzzWebhookUpdate(f *testing.F) {
	for _, seed := range [][]byte{
		hangartest.Update(1, 42, "/start"),
		hangartest.Update(2, 42, "/password 1"),
		hangartest.Update(3, 42, "/password"),
		hangartest.Update(4, 42, "/password -9223372036854775808"),
		hangartest.Update(5, 42, "/order sim-nano tokyo"),
		hangartest.Update(6, 42, "/status 99999999999999999999"),
		hangartest.Callback(7, 42, "confirm:deadbeef"),
		[]byte(`{"update_id":8}`),
		[]byte(`{"update_id":9,"message":null}`),
		[]byte(`{"update_id":10,"message":{"from":{"id":"x"}}}`),
		[]byte(`{"update_id":11,"message":{"text":"/help","chat":{"id":1},"from":{"id":1}}}`),
		[]byte(`{"update_id":12,"callback_query":{"id":"q","from":{"id":5},"data":"` + "\u202e" + `"}}`),
		[]byte(`{"update_id":-1}`), []byte(`{"update_id":1.5}`), []byte(`[]`), []byte(`null`), []byte(``), []byte("\x00"),
		[]byte(`{"update_id":13,"edited_message":{"from":{"id":7},"text":"/terminate 1"}}`),
	} {
		f.Add(seed)
	}
	env := hangartest.Start(f, hangartest.Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		r := env.PostUpdate(t, body)
		switch {
		case r.Status == 200:
			var ok struct{ OK bool }
			if err := json.Unmarshal(r.Body, &ok); err != nil || !ok.OK {
				t.Fatalf("body %q: 200 with %s", body, r.Body)
			}
		case r.Status >= 500:
			t.Fatalf("body %q: %d %s; a bad update is the sender's fault", body, r.Status, r.Body)
		default:
			var e struct{ Error, Code string }
			if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == "" || e.Code == "" {
				t.Fatalf("body %q: answer %d %s is not a JSON error", body, r.Status, r.Body)
			}
		}
		env.Settle(t)
		for _, kind := range []string{"router", "user"} {
			if n := env.Metric(t, `hangar_actor_panics_total{kind="`+kind+`"}`); n != 0 {
				t.Fatalf("body %q: the %s actor panicked (%v)", body, kind, n)
			}
		}
	})
}
