package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// confirmData reads the Confirm button's callback_data from a quote message.
func confirmData(t *testing.T, replyMarkup string) string {
	t.Helper()
	var kb struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(replyMarkup), &kb); err != nil || len(kb.InlineKeyboard) == 0 || len(kb.InlineKeyboard[0]) == 0 {
		t.Fatalf("no confirm keyboard in %q: %v", replyMarkup, err)
	}
	data := kb.InlineKeyboard[0][0].CallbackData
	if !strings.HasPrefix(data, "oc:") {
		t.Fatalf("first button is not Confirm: %q", data)
	}
	return data
}

// The confirm button carries a single-use quote of plan, region and price. The quote
// outlives a restart (it is in the store for 10 minutes), and the operator may restart
// with a new catalogue meanwhile (a price change). The user pressed Confirm under a
// message that said KRW 5,000; the order must be for the quoted price or refused with
// a new quote, never charged at a price the user was not shown.
func TestConfirmChargesThePriceTheUserWasQuoted(t *testing.T) {
	dir := t.TempDir()
	env := hangartest.Start(t, hangartest.Options{Dir: dir})
	const user = 4242
	env.Deposit(t, user, 50000)
	var id int64 = 100
	c := chat{t: t, env: env, user: user, next: &id}
	c.send("/order sim-nano tokyo")
	quote := c.expect(`for <b>KRW 5,000</b> a month\?`)
	confirm := confirmData(t, quote.ReplyMarkup)
	env.Stop()

	// The operator raises the price and restarts, within the quote's ten minutes.
	dearer, err := catalog.Parse([]byte(`{"currency":"KRW","plans":[
		{"spec_id":"sim-nano","name":"Simulated nano","provider":"sim","plan":"sim-1c-1g","regions":["tokyo"],"price":9000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env2 := hangartest.Start(t, hangartest.Options{Dir: dir, Catalog: dearer})
	c2 := chat{t: t, env: env2, user: user, next: &id}
	c2.press(user, confirm)
	hangartest.WaitFor(t, 10*time.Second, "the confirm to be answered", func() bool { return len(env2.Telegram.Callbacks()) > 0 })
	env2.Settle(t)

	orders, err := env2.Store.UserOrders(user, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orders {
		if o.PricePaid != 5000 {
			t.Errorf("order #%d was taken at %d although the confirmed quote said 5000 (callback answers %+v)",
				o.ID, o.PricePaid, env2.Telegram.Callbacks())
		}
	}
	bal, _ := env2.Store.GetBalance(user)
	// Refused: nothing moved; taken: 5,000 held or charged.
	if got := bal.Held + bal.Available; got != 50000 && got != 45000 {
		t.Errorf("balance after confirming a 5,000 quote: %+v (want 45,000 or 50,000 left in all)", bal)
	}
}

// failFirstCreate makes the first CreateOrder fail as a store does when its disk is
// briefly unwritable (or a transaction keeps conflicting).
type failFirstCreate struct {
	engine.Store
	failed atomic.Bool
}

func (f *failFirstCreate) CreateOrder(o store.Order, limit store.OrderLimit, notes ...store.OutboxMessage) (store.Order, error) {
	if f.failed.CompareAndSwap(false, true) {
		return store.Order{}, errors.New("write failed: no space left on device")
	}
	return f.Store.CreateOrder(o, limit, notes...)
}

// When the order cannot be written, the bot answers the press "Please try again" and
// "The order could not be taken right now; nothing was charged. Please try again."
// But the quote was taken before CreateOrder ran, so pressing Confirm again (the
// retry the message invites) finds the button used up: the user cannot retry.
func TestConfirmCanBeRetriedAfterTheOrderCouldNotBeWritten(t *testing.T) {
	fs := &failFirstCreate{}
	env := hangartest.Start(t, hangartest.Options{WrapStore: func(s engine.Store) engine.Store { fs.Store = s; return fs }})
	const user = 4343
	env.Deposit(t, user, 50000)
	var id int64 = 100
	c := chat{t: t, env: env, user: user, next: &id}
	c.send("/order sim-nano tokyo")
	confirm := confirmData(t, c.expect(`a month\?`).ReplyMarkup)

	c.press(user, confirm)
	c.expect(`could not be taken right now.*Please try again`)
	c.press(user, confirm) // the retry the bot asked for
	hangartest.WaitFor(t, 10*time.Second, "the second press to be answered", func() bool { return len(env.Telegram.Callbacks()) >= 2 })
	env.Settle(t)

	cbs := env.Telegram.Callbacks()
	orders, _ := env.Store.UserOrders(user, 10)
	if len(orders) != 1 {
		t.Fatalf("after a failed write and a retry of the same Confirm: %d orders (want 1); callback answers %+v", len(orders), cbs)
	}
}
