package engine_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// With no Linode or Vultr token only the simulator is on: their plans are neither
// offered (admin API, bot) nor accepted (POST /orders, /order), and a refused order
// holds no money.
func TestPlansOfProvidersThatAreOffAreNotOffered(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{}) // the simulator only
	env.Deposit(t, 42, 100000)

	var cat struct {
		Plans []struct {
			SpecID   string `json:"spec_id"`
			Provider string `json:"provider"`
		} `json:"plans"`
	}
	env.Admin(t, http.MethodGet, "/admin/plans", nil).JSON(t, &cat)
	if len(cat.Plans) == 0 {
		t.Fatal("no plans listed at all")
	}
	for _, p := range cat.Plans {
		if p.Provider != "sim" {
			t.Errorf("GET /admin/plans lists %s of %s, which is off", p.SpecID, p.Provider)
		}
	}

	for _, spec := range []struct{ id, region string }{{"linode-nano", "ap-northeast"}, {"vultr-1g", "nrt"}} {
		r := env.Bearer(t, http.MethodPost, "/orders", []byte(`{"user_id":42,"telegram_user_id":"42","spec_id":"`+spec.id+`","region":"`+spec.region+`"}`))
		var e struct{ Error, Code string }
		r.JSON(t, &e)
		if r.Status != http.StatusUnprocessableEntity || e.Code != "plan_unavailable" || !strings.Contains(e.Error, "not configured") {
			t.Errorf("POST /orders %s: %d %s, want 422 plan_unavailable", spec.id, r.Status, r.Body)
		}
	}
	if orders, _ := env.Store.ListOrders("", 10, 0); len(orders) != 0 {
		t.Fatalf("%d orders stored for plans that cannot be ordered", len(orders))
	}
	if b, _ := env.Store.GetBalance(42); b.Available != 100000 || b.Held != 0 {
		t.Fatalf("balance moved: %+v", b)
	}

	var id int64 = 100
	c := chat{t: t, env: env, user: 42, next: &id}
	c.send("/plans")
	plans := c.expect(`<b>Plans</b>`)
	if strings.Contains(plans.Text, "linode") || strings.Contains(plans.Text, "vultr") || !strings.Contains(plans.Text, "sim-nano") {
		t.Errorf("/plans offers what cannot be ordered:\n%s", plans.Text)
	}
	c.send("/order linode-nano ap-northeast")
	refused := c.expect(`cannot be ordered`)
	if refused.ReplyMarkup != "" {
		t.Errorf("a refused plan got a confirm keyboard: %s", refused.ReplyMarkup)
	}
}

// A provider that refuses the order itself (a 4xx) fails it at once, and the user is
// told that ordering the same again will not work, rather than "try again later".
func TestPermanentFailureTellsTheUserARetryWillNotHelp(t *testing.T) {
	p := newScripted(nil)
	p.fail = func(int) error { return errPermanent }
	env := setup(t, engine.QueueConfig{}, p)
	id := env.Order(t, 42, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderFailed, 5*time.Second)
	var text string
	hangartest.WaitFor(t, 5*time.Second, "the failure notice", func() bool {
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == 42 && strings.Contains(m.Text, "Server creation failed") {
				text = m.Text
				return true
			}
		}
		return false
	})
	if !strings.Contains(text, "will fail the same way") || !strings.Contains(text, "invalid plan") || strings.Contains(text, "try again later") {
		t.Fatalf("the notice of a permanent failure:\n%s", text)
	}
}
