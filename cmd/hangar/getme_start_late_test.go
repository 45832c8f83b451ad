package main

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
)

// blackhole accepts connections and never answers: Telegram's API behind a firewall
// that drops packets, a stuck proxy, a DNS-less resolver's hang.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// timeToHealth launches the daemon and returns how long /health took to answer 200.
func timeToHealth(t *testing.T, env ...string) time.Duration {
	t.Helper()
	start := time.Now()
	d := launchDaemon(t, t.TempDir(), env...)
	for {
		if resp, err := http.Get(d.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				took := time.Since(start)
				d.kill()
				return took
			}
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("not healthy in 30s\n%s", d.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Engine.Start now asks getMe, for up to 3 s, before it returns, and serve opens its
// HTTP listener (the webhook, /health) only after Start. With Telegram's API
// unreachable in a way that does not refuse (dropped packets), every start keeps the
// webhook closed and /health unanswered for 3 s more than with Telegram answering:
// Telegram's deliveries in that window are refused, and a supervisor's readiness
// probe waits. Nothing needs the name before the first update: learning it in the
// background costs only the answers to "/cmd@other_bot" in those first seconds, which
// the bot gives anyway whenever getMe is slow.
func TestStartDoesNotWaitForGetMe(t *testing.T) {
	fake := telegramfake.New(hangartest.BotToken)
	defer fake.Close()
	answering := timeToHealth(t, telegramEnv(fake)...)
	silent := timeToHealth(t, "HANGAR_BOT_TOKEN="+hangartest.BotToken, "HANGAR_TELEGRAM_API="+blackhole(t),
		"HANGAR_WEBHOOK_SECRET="+hangartest.WebhookSecret)
	if silent-answering > 2*time.Second {
		t.Errorf("/health answered %v after launch with Telegram's API silent, %v with it answering: the start waited %v on getMe before opening the webhook",
			silent.Round(time.Millisecond), answering.Round(time.Millisecond), (silent - answering).Round(time.Millisecond))
	}
}
