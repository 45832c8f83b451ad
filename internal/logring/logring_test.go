package logring

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const (
	adminToken = "adm1n-T0ken-very-secret"
	botTok     = "123456789:AAE_abcdefghijklmnopqrstuvwxyz0123456"
)

type bundle struct {
	ring *Ring
	log  *slog.Logger
	out  *bytes.Buffer // what the daemon's own handler wrote
}

func setup(t *testing.T, capacity int) bundle {
	t.Helper()
	out := &bytes.Buffer{}
	ring := New(capacity)
	next := slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})
	return bundle{ring: ring, log: slog.New(Tee(next, ring, NewScrubber(adminToken, botTok, "short"))), out: out}
}

func (b bundle) all(t *testing.T) []Record {
	t.Helper()
	recs, _, _ := b.ring.Since(0, slog.LevelDebug, 0)
	return recs
}

// TestSecretsNeverKept: whatever shape a secret takes in a log call, neither the kept
// line nor the one written to stderr holds it.
func TestSecretsNeverKept(t *testing.T) {
	tests := []struct {
		name   string
		log    func(*slog.Logger)
		secret string
		keep   string // a harmless part that must survive
	}{
		{"configured token in the message", func(l *slog.Logger) { l.Info("calling with " + adminToken) }, adminToken, "calling with"},
		{"url-encoded in an attribute", func(l *slog.Logger) {
			l.Warn("request failed", "url", "https://x/?t="+url.QueryEscape(adminToken+" x"))
		}, url.QueryEscape(adminToken), "request failed"},
		{"bot token in an error", func(l *slog.Logger) {
			l.Error("send", "err", errors.New("Post https://api.telegram.org/bot"+botTok+"/sendMessage: timeout"))
		}, "AAE_abcdefghijklmnopqrstuvwxyz", "sendMessage: timeout"},
		{"password pair in text", func(l *slog.Logger) { l.Info("server ready root password: hunter2 ip 1.2.3.4") }, "hunter2", "ip 1.2.3.4"},
		{"secret-named attribute", func(l *slog.Logger) { l.Info("login", "root_password", "pa55") }, "pa55", "root_password="},
		{"bearer header", func(l *slog.Logger) { l.Debug("hdr", "auth", "Bearer abc.def.ghi") }, "abc.def.ghi", "auth="},
		{"attribute added by With, in a group", func(l *slog.Logger) {
			l.With("api_key", "k-123456").WithGroup("linode").Info("list", "token", "tok-999999", "n", 3)
		}, "999999", "linode.n=3"},
		{"korean password", func(l *slog.Logger) { l.Info("서버 준비 완료 비밀번호: 1234abcd 접속") }, "1234abcd", "접속"},
		{"token in a JSON body", func(l *slog.Logger) { l.Warn(`refused {"token":"t0k3n-abc","ok":false}`) }, "t0k3n-abc", "ok"},
		{"json-escaped secret", func(l *slog.Logger) { l.Info(`body {"t":"` + adminToken + `"}`) }, adminToken, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, 10)
			tt.log(b.log)
			recs := b.all(t)
			if len(recs) != 1 {
				t.Fatalf("kept %d records, want 1", len(recs))
			}
			line := recs[0].Msg + " " + recs[0].Attrs
			if strings.Contains(line, tt.secret) {
				t.Errorf("kept line holds the secret: %q", line)
			}
			if !strings.Contains(line, tt.keep) || !strings.Contains(line, Mask) {
				t.Errorf("kept line %q lost %q or has no mask", line, tt.keep)
			}
			if b.out.Len() == 0 {
				t.Error("the daemon's own handler got nothing")
			}
			// The line written to stderr (journalctl, docker logs) is scrubbed too: only
			// the console's copy was.
			if out := b.out.String(); strings.Contains(out, tt.secret) || !strings.Contains(out, tt.keep) {
				t.Errorf("stderr line %q holds the secret or lost %q", out, tt.keep)
			}
		})
	}
}

// TestOrdinaryLinesKept: words that only sit near "token" or a short configured
// secret are not taken for secrets.
func TestOrdinaryLinesKept(t *testing.T) {
	for _, line := range []string{
		"a short answer",
		"no bot token: Telegram sending is off; replies go to the log",
		"token refused by the provider",
	} {
		b := setup(t, 10)
		b.log.Info(line)
		if got := b.all(t)[0].Msg; got != line {
			t.Errorf("kept %q, want %q unchanged", got, line)
		}
	}
}

func TestRingSince(t *testing.T) {
	b := setup(t, 4)
	for i := range 6 { // seqs 1..6; the ring keeps 3..6
		lvl := slog.LevelInfo
		if i%2 == 1 {
			lvl = slog.LevelWarn
		}
		b.log.Log(t.Context(), lvl, "m", "i", i)
	}
	tests := []struct {
		name     string
		since    uint64
		min      slog.Level
		limit    int
		wantSeqs []uint64
		wantGap  bool
	}{
		{"from the start: the oldest were pushed out", 0, slog.LevelDebug, 0, []uint64{3, 4, 5, 6}, true},
		{"after 4", 4, slog.LevelDebug, 0, []uint64{5, 6}, false},
		{"caught up", 6, slog.LevelDebug, 0, nil, false},
		{"behind the ring", 1, slog.LevelDebug, 0, []uint64{3, 4, 5, 6}, true},
		{"warnings only", 0, slog.LevelWarn, 0, []uint64{4, 6}, true},
		{"limit keeps the newest", 2, slog.LevelDebug, 2, []uint64{5, 6}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, last, gap := b.ring.Since(tt.since, tt.min, tt.limit)
			var seqs []uint64
			for _, r := range recs {
				seqs = append(seqs, r.Seq)
			}
			if last != 6 || gap != tt.wantGap || !equal(seqs, tt.wantSeqs) {
				t.Fatalf("Since(%d) = %v last %d gap %v, want %v last 6 gap %v", tt.since, seqs, last, gap, tt.wantSeqs, tt.wantGap)
			}
		})
	}
}

func TestEnabledFollowsTheDaemonsLevel(t *testing.T) {
	ring := New(10)
	l := slog.New(Tee(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}), ring, nil))
	l.Info("dropped")
	l.Warn("kept")
	if recs, _, _ := ring.Since(0, slog.LevelDebug, 0); len(recs) != 1 || recs[0].Msg != "kept" {
		t.Fatalf("kept %+v", recs)
	}
}

func TestLongAttrsCut(t *testing.T) {
	b := setup(t, 2)
	b.log.Info("big", "v", strings.Repeat("é", 3000))
	if a := b.all(t)[0].Attrs; len(a) > maxAttrs+len("…") || !strings.HasSuffix(a, "…") {
		t.Fatalf("attrs of %d bytes", len(a))
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
