package engine_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// failUpdateOnce is the real store whose commit of one update fails once, as a disk
// error would: the webhook answers 5xx and Telegram delivers the update again.
type failUpdateOnce struct {
	engine.Store
	id     int64
	failed atomic.Bool
}

func (s *failUpdateOnce) ProcessUpdate(o store.UpdateOutcome) ([]store.OutboxMessage, error) {
	if o.UpdateID == s.id && s.failed.CompareAndSwap(false, true) {
		return nil, errors.New("the write-ahead log is unavailable")
	}
	return s.Store.ProcessUpdate(o)
}

// A /renew whose update Telegram delivers again after its commit failed pays one
// period, not two: the renewal commits before the update is marked seen, keyed on the
// update_id (a kill between the two commits is the same case).
func TestRedeliveredRenewPaysOnce(t *testing.T) {
	fs := &failUpdateOnce{id: 1}
	env := hangartest.Start(t, hangartest.Options{Billing: billing,
		WrapStore: func(s engine.Store) engine.Store { fs.Store = s; return fs }})
	env.Deposit(t, billUser, simPrice*4)
	id := env.Order(t, billUser, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	upd := hangartest.Update(1, billUser, fmt.Sprintf("/renew %d", id))
	if r := env.PostUpdate(t, upd); r.Status < 500 {
		t.Fatalf("the update whose commit failed answered %d, want a 5xx for Telegram to deliver it again", r.Status)
	}
	if r := env.PostUpdate(t, upd); r.Status != 200 {
		t.Fatalf("the re-delivery answered %d %s", r.Status, r.Body)
	}
	o, _ := env.Store.GetOrder(id)
	ledger := ledgerAgrees(t, env, simPrice*2)
	if r := renewals(ledger, id); o.Period != 2 || len(r) != 1 {
		t.Fatalf("one /renew delivered twice: period %d, renewals %v; want period 2, one renewal", o.Period, r)
	}
	// A later /renew, another update, pays the next period.
	if r := env.PostUpdate(t, hangartest.Update(2, billUser, fmt.Sprintf("/renew %d", id))); r.Status != 200 {
		t.Fatalf("a second /renew answered %d", r.Status)
	}
	if o, _ = env.Store.GetOrder(id); o.Period != 3 {
		t.Fatalf("after a second /renew: period %d, want 3", o.Period)
	}
}

// An update whose commit failed is not counted in its sender's rate-limit window: the
// re-delivery is, once. It was counted for both, so a user within the limit could be
// told to slow down.
func TestFailedUpdateIsCountedOnce(t *testing.T) {
	const user = 77
	fs := &failUpdateOnce{id: 2}
	env := hangartest.Start(t, hangartest.Options{RateLimit: 2,
		WrapStore: func(s engine.Store) engine.Store { fs.Store = s; return fs }})
	for _, d := range []struct {
		id     int64
		status int
	}{{1, 200}, {2, 500}, {2, 200}} {
		if r := env.PostUpdate(t, hangartest.Update(d.id, user, "/help")); (r.Status >= 500) != (d.status >= 500) {
			t.Fatalf("update %d answered %d, want %d", d.id, r.Status, d.status)
		}
	}
	w, err := env.Store.LoadWindow(user)
	if err != nil {
		t.Fatal(err)
	}
	if w.Count != 2 || w.Warned {
		t.Fatalf("window after two messages (one delivered twice) within a limit of 2: count %d, warned %v", w.Count, w.Warned)
	}
}
