package engine_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/catalog"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// renewalsBefore takes the price of every other renewal due first off the balance,
// whether or not the balance can pay it. A renewal the balance cannot pay takes
// nothing (that server is suspended instead), so the reminder of the next one counts
// money that stays: the user is told that their balance is KRW 0 and KRW 5,000 is
// missing for a renewal their balance of KRW 10,000 then pays, as it does at the end.
// (The reminder's "your balance is" is in any case the balance less the other
// renewals, not the balance the user sees with /balance.)
func TestReminderDoesNotCountARenewalTheBalanceCannotPay(t *testing.T) {
	cat, err := catalog.Parse([]byte(`{"currency":"KRW","plans":[
		{"spec_id":"sim-big","name":"Simulated big","provider":"sim","plan":"sim-4c-8g","regions":["tokyo"],"price":20000},
		{"spec_id":"sim-nano","name":"Simulated nano","provider":"sim","plan":"sim-1c-1g","regions":["tokyo"],"price":5000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	sim := cloud.NewSim(cloud.SimConfig{Rand: rand.New(rand.NewPCG(1, 1))})
	env := hangartest.Start(t, hangartest.Options{AdminChatID: billAdmin, Billing: billing, Catalog: cat,
		Providers: map[string]engine.Provider{"sim": sim}})
	env.Deposit(t, billUser, 20000+5000+10000) // both first periods, and 10,000 left
	big := env.Order(t, billUser, "sim-big", "tokyo")
	ob := env.WaitStatus(t, big, store.OrderActive, 10*time.Second)
	nano := env.Order(t, billUser, "sim-nano", "tokyo")
	on := env.WaitStatus(t, nano, store.OrderActive, 10*time.Second)
	if on.PaidUntil.Before(ob.PaidUntil) {
		t.Fatalf("the nano's period ends first (%v < %v); the test wants the big one first", on.PaidUntil, ob.PaidUntil)
	}
	if b, _ := env.Store.GetBalance(billUser); b.Available != 10000 {
		t.Fatalf("available %d, want 10000", b.Available)
	}
	// Through both reminders of the nano's period (20 and 5 minutes before its end).
	env.Clock.Advance(on.PaidUntil.Sub(env.Clock.Now()) - 21*time.Minute)
	for range 18 {
		env.Clock.Advance(time.Minute)
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	var wrong []string
	for _, m := range messagesTo(env, billUser, "missing") {
		if strings.Contains(m, "#"+strconv.FormatInt(nano, 10)) {
			wrong = append(wrong, m)
		}
	}
	// The end: the big one cannot be paid and is suspended, the nano is renewed.
	env.Clock.Advance(on.PaidUntil.Sub(env.Clock.Now()) + time.Second)
	waitOrder(t, env, nano, "the nano renewed", func(o store.Order) bool { return o.Period == 2 })
	waitOrder(t, env, big, "the big one suspended", func(o store.Order) bool { return o.Status == store.OrderSuspended })
	if len(wrong) > 0 {
		t.Fatalf("the nano's renewal was paid at its end from the balance of 10,000 (the big one, 20,000, could not be and was suspended), yet its reminder said:\n%s",
			strings.Join(wrong, "\n---\n"))
	}
}
