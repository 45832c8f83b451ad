package engine_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// clouds are fake Linode and Vultr APIs driven through the real clients.
type clouds struct {
	linode *linodefake.Server
	vultr  *vultrfake.Server
}

func startClouds(t *testing.T) (clouds, map[string]engine.Provider) {
	t.Helper()
	c := clouds{linode: linodefake.New("linode-token"), vultr: vultrfake.New("vultr-key")}
	t.Cleanup(c.linode.Close)
	t.Cleanup(c.vultr.Close)
	lin, err := cloud.NewLinode("linode-token", c.linode.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	vul, err := cloud.NewVultr("vultr-key", c.vultr.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, map[string]engine.Provider{"sim": cloud.NewSim(cloud.SimConfig{}), "linode": lin, "vultr": vul}
}

// chat drives one Telegram user through the webhook and reads the bot's answers.
type chat struct {
	t    *testing.T
	env  *hangartest.Env
	user int64
	next *int64
}

func (c chat) send(text string) {
	c.t.Helper()
	*c.next++
	if r := c.env.PostUpdate(c.t, hangartest.Update(*c.next, c.user, text)); r.Status != 200 {
		c.t.Fatalf("%s: %d %s", text, r.Status, r.Body)
	}
}

func (c chat) press(from int64, data string) {
	c.t.Helper()
	*c.next++
	if r := c.env.PostUpdate(c.t, hangartest.Callback(*c.next, from, data)); r.Status != 200 {
		c.t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
}

// expect waits for a message to this user's chat matching re and returns it.
func (c chat) expect(re string) telegramfake.Message {
	c.t.Helper()
	rx := regexp.MustCompile(re)
	var found telegramfake.Message
	hangartest.WaitFor(c.t, 15*time.Second, "a message matching "+re, func() bool {
		for _, m := range c.env.Telegram.Messages() {
			if m.ChatID == c.user && rx.MatchString(m.Text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

func (c chat) expectCallback(re string) {
	c.t.Helper()
	rx := regexp.MustCompile(re)
	hangartest.WaitFor(c.t, 10*time.Second, "a callback answer matching "+re, func() bool {
		for _, cb := range c.env.Telegram.Callbacks() {
			if rx.MatchString(cb.Text) {
				return true
			}
		}
		return false
	})
}

func TestChatOrderFlowEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		provider, spec, region string
		price                  int64
	}{
		{"linode", "linode-nano", "ap-northeast", 7000},
		{"vultr", "vultr-1g", "nrt", 7000},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			cl, providers := startClouds(t)
			env := hangartest.Start(t, hangartest.Options{Providers: providers})
			env.Deposit(t, 500, 20000)
			var id int64 = 1000
			c := chat{t: t, env: env, user: 500, next: &id}

			c.send("/plans")
			c.expect(tc.spec)
			c.send(fmt.Sprintf("/order %s %s", tc.spec, tc.region))
			quote := c.expect(`for <b>KRW 7,000</b> a month\?`)
			var kb struct {
				InlineKeyboard [][]struct {
					Text         string `json:"text"`
					CallbackData string `json:"callback_data"`
				} `json:"inline_keyboard"`
			}
			if err := json.Unmarshal([]byte(quote.ReplyMarkup), &kb); err != nil || len(kb.InlineKeyboard) != 1 {
				t.Fatalf("confirm keyboard missing: %q", quote.ReplyMarkup)
			}
			confirm := kb.InlineKeyboard[0][0].CallbackData

			// Another user presses the same button: refused, nothing ordered.
			c.press(666, confirm)
			c.expectCallback("not for you")
			if orders, _ := env.Store.ListOrders("", 10, 0); len(orders) != 0 {
				t.Fatalf("a forged confirm created %d orders", len(orders))
			}
			c.press(500, confirm)
			received := c.expect(`Order <b>#(\d+)</b> received, creating your server`)
			orderID := mustOrderID(t, received.Text)
			c.press(500, confirm) // a double tap creates nothing more
			c.expectCallback("already used")

			o := env.WaitStatus(t, orderID, store.OrderActive, 20*time.Second)
			ready := c.expect(`Your server is ready`)
			label := engine.InstanceLabel(orderID)
			var sentPassword string
			var ok bool
			if tc.provider == "linode" {
				sentPassword, ok = cl.linode.RootPass(label)
			} else {
				sentPassword, ok = cl.vultr.Password(label)
			}
			if !ok || sentPassword == "" {
				t.Fatalf("the provider has no password for %s", label)
			}
			for _, want := range []string{o.IPAddress, "ssh root@" + o.IPAddress, sentPassword, tc.region} {
				if !strings.Contains(ready.Text, want) {
					t.Errorf("ready message lacks %q:\n%s", want, ready.Text)
				}
			}

			c.send(fmt.Sprintf("/status %d", orderID))
			c.expect(fmt.Sprintf(`Order <b>#%d</b>: running`, orderID))
			c.send("/servers")
			c.expect(fmt.Sprintf(`#%d %s in %s — running`, orderID, tc.spec, tc.region))
			c.send("/balance")
			c.expect(`Balance: <b>KRW 13,000</b> available, KRW 0 held`)
			c.send(fmt.Sprintf("/status %d", orderID+5))
			c.expect(fmt.Sprintf(`You have no order #%d`, orderID+5))

			c.send(fmt.Sprintf("/terminate %d", orderID))
			c.expect(`was deleted`)
			env.WaitStatus(t, orderID, store.OrderTerminated, 10*time.Second)
			count := cl.linode.Count
			if tc.provider == "vultr" {
				count = cl.vultr.Count
			}
			if n := count(); n != 0 {
				t.Fatalf("%d instances left after terminate", n)
			}

			// The root password reached the user and the provider, and nothing else.
			assertNowhere(t, env, sentPassword)
		})
	}
}

// assertNowhere fails if secret is in the logs, the outbox views or any file of the
// data directory.
func assertNowhere(t *testing.T, env *hangartest.Env, secret string) {
	t.Helper()
	if strings.Contains(env.Logs.String(), secret) {
		t.Fatal("the root password is in the logs")
	}
	for _, path := range []string{"/admin/outbox", "/admin/orders"} {
		if r := env.Admin(t, http.MethodGet, path, nil); strings.Contains(string(r.Body), secret) {
			t.Fatalf("the root password is in %s", path)
		}
	}
	env.Stop() // flush everything to disk before scanning it
	err := filepath.WalkDir(env.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("the root password is stored in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mustOrderID(t *testing.T, text string) int64 {
	t.Helper()
	m := regexp.MustCompile(`#(\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no order number in %q", text)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	return id
}

func TestCreateThatTimesOutIsFoundByLabel(t *testing.T) {
	cl, providers := startClouds(t)
	env := hangartest.Start(t, hangartest.Options{Providers: providers,
		Queue: engine.QueueConfig{ProvisionTimeout: 500 * time.Millisecond, Retry: engine.RetryPolicy{Base: time.Millisecond}}})
	env.Deposit(t, 9, 7000)
	cl.linode.CreateThenHang(1) // the server is made, the answer never comes
	id := env.Order(t, 9, "linode-nano", "ap-northeast")
	var o store.Order
	hangartest.WaitFor(t, 15*time.Second, "the order to become active after a retry", func() bool {
		env.Clock.Advance(time.Second) // let the retry come due
		o, _ = env.Store.GetOrder(id)
		return o.Status == store.OrderActive
	})
	if o.Attempts != 2 {
		t.Fatalf("attempts = %d, want the timed-out one and the retry", o.Attempts)
	}
	if n := cl.linode.Count(); n != 1 {
		t.Fatalf("%d servers exist, want exactly 1", n)
	}
	b, _ := env.Store.GetBalance(9)
	ledger, _ := env.Store.Ledger(9, 100)
	kinds := []string{}
	for _, e := range ledger {
		kinds = append(kinds, e.Kind)
	}
	if b.Available != 0 || b.Held != 0 || strings.Join(kinds, ",") != "deposit,hold,capture" {
		t.Fatalf("balance %+v, ledger %v: want charged exactly once", b, kinds)
	}
}

func TestHundredParallelOrdersWithFundsForTen(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{
		Queue: engine.QueueConfig{OrderLimit: store.OrderLimit{Max: 1000, Window: time.Hour}}})
	env.Deposit(t, 3, 50000) // sim-nano costs 5000
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.Bearer(t, http.MethodPost, "/orders", []byte(`{"user_id":3,"telegram_user_id":"3","spec_id":"sim-nano","region":"tokyo"}`))
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[201] != 10 || statuses[402] != 90 {
		t.Fatalf("statuses = %v, want 10 × 201 and 90 × 402", statuses)
	}
	// Let the ten orders finish so that no money moves while it is counted.
	hangartest.WaitFor(t, 10*time.Second, "the accepted orders to become active", func() bool {
		active, _ := env.Store.ListOrders(store.OrderActive, 100, 0)
		return len(active) == 10
	})
	b, _ := env.Store.GetBalance(3)
	if b.Available != 0 || b.Held != 0 {
		t.Fatalf("balance = %+v, want exactly 0 available and 0 held", b)
	}
	// The ledger replays to the balance, and holds minus settlements match what is held.
	ledger, _ := env.Store.Ledger(3, 1000)
	var avail, held int64
	for _, e := range ledger {
		switch e.Kind {
		case store.LedgerDeposit:
			avail += e.Amount
		case store.LedgerHold:
			avail -= e.Amount
			held += e.Amount
		case store.LedgerCapture:
			held -= e.Amount
		case store.LedgerRelease:
			held -= e.Amount
			avail += e.Amount
		}
		if avail != e.Available || held != e.Held {
			t.Fatalf("ledger entry %d says %d/%d, replay gives %d/%d", e.Seq, e.Available, e.Held, avail, held)
		}
	}
	if avail != b.Available || held != b.Held {
		t.Fatalf("ledger replays to %d/%d, balance is %+v", avail, held, b)
	}
}

func TestOrdersAreLimitedPerUserPerHour(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 4, 1_000_000)
	for i := range 11 {
		r := env.Bearer(t, http.MethodPost, "/orders", []byte(`{"user_id":4,"telegram_user_id":"4","spec_id":"sim-nano","region":"tokyo"}`))
		want := 201
		if i == 10 {
			want = 429
		}
		if r.Status != want {
			t.Fatalf("order %d: %d %s, want %d", i+1, r.Status, r.Body, want)
		}
	}
	env.Clock.Advance(time.Hour + time.Second)
	env.Order(t, 4, "sim-nano", "tokyo") // a new hour, a new window
}

func TestAdminTerminate(t *testing.T) {
	cl, providers := startClouds(t)
	env := hangartest.Start(t, hangartest.Options{Providers: providers})
	env.Deposit(t, 8, 100000)
	id := env.Order(t, 8, "linode-nano", "ap-northeast")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	tests := []struct {
		name   string
		id     int64
		status int
	}{
		{"unknown order", 424242, 404},
		{"active order", id, 200},
		{"already terminated", id, 409},
	}
	for _, tt := range tests {
		r := env.Admin(t, http.MethodPost, fmt.Sprintf("/admin/orders/%d/terminate", tt.id), nil)
		if r.Status != tt.status {
			t.Fatalf("%s: %d %s, want %d", tt.name, r.Status, r.Body, tt.status)
		}
	}
	if o, _ := env.Store.GetOrder(id); o.Status != store.OrderTerminated {
		t.Fatalf("order is %s, want terminated", o.Status)
	}
	if n := cl.linode.Count(); n != 0 {
		t.Fatalf("%d servers left at the provider", n)
	}
}
