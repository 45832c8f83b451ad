package engine_test

import (
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// Telegram ends a bot_command entity at any whitespace, and clients let a user put the
// arguments on the next line (or paste them after a tab). splitCommand cuts the command
// at the first space only, so "/order\nsim-nano tokyo" is the unknown command
// "/order\nsim-nano", and a key pasted under "/sshkey" is never read.
func TestCommandArgumentsAfterANewline(t *testing.T) {
	for _, text := range []string{"/order\nsim-nano tokyo", "/order\tsim-nano tokyo"} {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(text, "\n", `\n`), "\t", `\t`), func(t *testing.T) {
			env := hangartest.Start(t, hangartest.Options{})
			var id int64 = 10
			c := chat{t: t, env: env, user: 91, next: &id}
			c.send(text)
			c.send("/help")
			env.Settle(t)
			c.expect("this list")
			var got []string
			for _, m := range env.Telegram.Messages() {
				if m.ChatID == 91 && !strings.Contains(m.Text, "this list") {
					got = append(got, m.Text)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], "a month?") {
				t.Fatalf("%q: want the quote for sim-nano in tokyo, got %q", text, got)
			}
		})
	}
}

// spec_ids are lowercase by the catalogue's own rule (a-z 0-9 -), so "SIM-NANO" can
// only mean sim-nano; a phone's keyboard capitalising it gets "Unknown plan".
func TestPlanIDIsNotCaseSensitive(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	var id int64 = 10
	c := chat{t: t, env: env, user: 92, next: &id}
	c.send("/order Sim-Nano tokyo")
	c.send("/help")
	env.Settle(t)
	c.expect("this list")
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == 92 && strings.Contains(m.Text, "a month?") {
			return
		}
	}
	var got []string
	for _, m := range env.Telegram.Messages() {
		got = append(got, m.Text)
	}
	t.Fatalf("/order Sim-Nano tokyo: no quote; the bot said %q", got[:len(got)-1])
}
