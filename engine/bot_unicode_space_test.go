package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
)

// splitCommand now ends the command word at any white space ("arguments pasted on the
// next line, or after a tab, are arguments"). White space outside ASCII is more than
// one byte: a no-break space (U+00A0, what many phone keyboards and copied web text
// put between words) or an ideographic space (U+3000, a Korean or Japanese IME's
// space). Cutting one byte past the space's first byte leaves the rest of it at the
// start of the arguments: "/order<NBSP>sim-nano tokyo" is answered "Unknown plan
// <code>\ufffdsim-nano</code>" (the stray byte, sent as a replacement character)
// instead of the quote, and every other command's first argument is spoilt the same way.
func TestCommandEndedByNonASCIISpaceKeepsArgumentsWhole(t *testing.T) {
	for _, sp := range []string{"\u00a0", "\u3000"} {
		env := hangartest.Start(t, hangartest.Options{})
		const user = 5151
		env.Deposit(t, user, 50000)
		var id int64 = 100
		c := chat{t: t, env: env, user: user, next: &id}
		c.send("/order" + sp + "sim-nano tokyo")
		var got []string
		hangartest.WaitFor(t, 15*time.Second, "an answer to /order", func() bool {
			got = got[:0]
			for _, m := range env.Telegram.Messages() {
				if m.ChatID == user {
					got = append(got, m.Text)
				}
			}
			return len(got) > 0
		})
		for _, text := range got {
			if strings.Contains(text, "Unknown plan") {
				t.Errorf("space %U: /order<space>sim-nano tokyo was answered %q; want the quote for sim-nano", []rune(sp)[0], text)
			}
		}
		env.Stop()
	}
}
