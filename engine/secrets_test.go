package engine_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// A Telegram that refuses the "server ready" message and quotes the request in its
// error must not make the root password echo anywhere: not in the log, not in any
// file of the data directory (the log segments and Badger's tables and value log
// included), not in /admin/outbox. The user is told, and can ask for the password
// again with /password.
func TestRefusedPasswordMessageLeaksNothing(t *testing.T) {
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, 42, 1_000_000)
	var passwords []string
	for id := int64(1); id <= 3; id++ {
		passwords = append(passwords, env.Password(id))
	}
	hasPassword := func(text string) bool {
		for _, p := range passwords {
			if strings.Contains(text, p) {
				return true
			}
		}
		return false
	}
	env.Telegram.RefuseEchoing(hasPassword)

	id := env.Order(t, 42, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	msgs, ok := waitChatText(env, 42, "/password", 10*time.Second)
	if !ok {
		t.Fatalf("the user was not told how to get the refused password; messages: %+v", msgs)
	}
	env.Settle(t)

	// The refusal quoted the password back: it must have been masked everywhere.
	if hasPassword(env.Logs.String()) {
		t.Error("the daemon's log holds the root password")
	}
	r := env.Admin(t, http.MethodGet, "/admin/outbox", nil)
	if r.Status != 200 {
		t.Fatalf("/admin/outbox: %d %s", r.Status, r.Body)
	}
	if hasPassword(string(r.Body)) {
		t.Errorf("/admin/outbox shows the root password: %s", r.Body)
	}
	if !bytes.Contains(r.Body, []byte("can't parse entities")) {
		t.Errorf("/admin/outbox does not show the refusal at all (the test would prove nothing): %s", r.Body)
	}
	grepDataDir(t, env.Dir, passwords)

	// Asked again within the window, the password arrives.
	env.Telegram.RefuseEchoing(nil)
	env.PostUpdate(t, hangartest.Update(1, 42, fmt.Sprintf("/password %d", id)))
	if msgs, ok := waitChatText(env, 42, env.Password(id), 10*time.Second); !ok {
		t.Fatalf("/password did not send the password; messages: %+v", msgs)
	}
	// After the window it is refused.
	env.Clock.Advance(16 * time.Minute)
	env.PostUpdate(t, hangartest.Update(2, 42, fmt.Sprintf("/password %d", id)))
	if msgs, ok := waitChatText(env, 42, "can only be sent again within", 10*time.Second); !ok {
		t.Fatalf("/password after the window was not refused; messages: %+v", msgs)
	}
	env.Settle(t)
	if hasPassword(env.Logs.String()) {
		t.Error("the daemon's log holds the root password")
	}
	grepDataDir(t, env.Dir, passwords)
}

// waitChatText waits for a message to chat containing want.
func waitChatText(env *hangartest.Env, chat int64, want string, timeout time.Duration) ([]string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		var texts []string
		for _, m := range env.Telegram.Messages() {
			if m.ChatID == chat {
				texts = append(texts, m.Text)
				if strings.Contains(m.Text, want) {
					return texts, true
				}
			}
		}
		if time.Now().After(deadline) {
			return texts, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// grepDataDir fails if any file under dir holds any of the secrets, byte for byte.
// Badger's value log is a large sparse file: only its data regions are read.
// The order's plan, which the store does hold, proves the grep can see records.
func grepDataDir(t *testing.T, dir string, secrets []string) {
	t.Helper()
	files, control := 0, false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if found, err := fileContains(path, []byte("sim-nano")); err != nil {
			return err
		} else if found {
			control = true
		}
		for _, s := range secrets {
			found, err := fileContains(path, []byte(s))
			if err != nil {
				return err
			}
			if found {
				t.Errorf("%s holds a root password", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 || !control {
		t.Fatalf("%d files under %s and none holds the order's plan: the grep proves nothing", files, dir)
	}
}

const (
	seekData = 3 // SEEK_DATA: the next offset holding data
	seekHole = 4 // SEEK_HOLE: the next hole (the end of the file counts as one)
)

func fileContains(path string, needle []byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 4<<20)
	var off int64
	for {
		start, err := f.Seek(off, seekData)
		if err != nil {
			return false, nil // no data past off (ENXIO)
		}
		end, err := f.Seek(start, seekHole)
		if err != nil {
			return false, err
		}
		// Chunks overlap by len(needle)-1 so a match across a boundary is seen.
		for pos := start; pos < end; {
			n, err := f.ReadAt(buf[:min(int64(len(buf)), end-pos)], pos)
			if bytes.Contains(buf[:n], needle) {
				return true, nil
			}
			if err != nil || n == 0 {
				break
			}
			if pos+int64(n) >= end {
				break
			}
			pos += int64(n) - int64(len(needle)-1)
		}
		off = end
	}
}

// A password the provider chose (Vultr) exists only in memory on its way to the user:
// when Telegram refuses that message and quotes it back, the password appears nowhere,
// and the user is told to reset it since hangar cannot send it again.
func TestRefusedProviderChosenPasswordLeaksNothing(t *testing.T) {
	fake := vultrfake.New("vultr-echo-test")
	defer fake.Close()
	prov, err := cloud.NewVultr("vultr-echo-test", fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := hangartest.Start(t, hangartest.Options{Providers: map[string]engine.Provider{"vultr": prov}})
	env.Deposit(t, 42, 1_000_000)
	env.Telegram.RefuseEchoing(func(text string) bool { return strings.Contains(text, "Your server is ready") })
	id := env.Order(t, 42, "vultr-1g", "nrt")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	pw, ok := fake.Password(engine.InstanceLabel(id))
	if !ok {
		t.Fatal("the fake holds no password for the server")
	}
	if msgs, ok := waitChatText(env, 42, "cannot send it again", 10*time.Second); !ok {
		t.Fatalf("the user was not told to reset the password; messages: %q", msgs)
	}
	env.Settle(t)
	r := env.Admin(t, http.MethodGet, "/admin/outbox", nil)
	if strings.Contains(env.Logs.String(), pw) || strings.Contains(string(r.Body), pw) {
		t.Fatal("the provider's password is in the log or /admin/outbox")
	}
	if !strings.Contains(string(r.Body), "can't parse entities") {
		t.Fatalf("/admin/outbox does not show the refusal (the test would prove nothing): %s", r.Body)
	}
	grepDataDirFor(t, env.Dir, []string{pw})
}

// Whatever puts a root password message in the outbox, the sender posts it only to the
// order's owner's private chat: here a message naming the order's password is
// committed for a group chat, as a careless new sender might, and the group never
// sees the password. Only the bot's /password and the ready notice chose the chat
// before; a third sender would have posted it wherever it said.
func TestPasswordMessageGoesOnlyToTheOwnersPrivateChat(t *testing.T) {
	const owner, other, group = 42, 43, -100123
	env := hangartest.Start(t, hangartest.Options{})
	env.Deposit(t, owner, 1_000_000)
	env.Deposit(t, other, 1_000_000)
	id := env.Order(t, owner, "sim-nano", "tokyo")
	env.WaitStatus(t, id, store.OrderActive, 10*time.Second)
	password := env.Password(id)
	if msgs, ok := waitChatText(env, owner, password, 10*time.Second); !ok {
		t.Fatalf("the owner never got the password (the test would prove nothing): %+v", msgs)
	}

	_, err := env.Store.UpdateOrders([]store.OrderChange{{ID: id, Apply: func(*store.Order) error { return nil },
		Notes: []store.OutboxMessage{{ChatID: group, SecretOrderID: id, ParseMode: "HTML",
			Text: "the root password is " + store.RootPasswordPlaceholder}}}})
	if err != nil {
		t.Fatal(err)
	}
	// A cancelled order's notice makes the outbox read the store, past its least gap
	// between two reads.
	pause(t, env, true)
	pending := env.Order(t, other, "sim-nano", "tokyo")
	time.Sleep(1100 * time.Millisecond)
	if _, err := env.Engine.CancelOrder(pending); err != nil {
		t.Fatal(err)
	}
	if msgs, ok := waitChatText(env, other, "", 10*time.Second); !ok {
		t.Fatalf("the outbox never sent the cancel notice: %+v", msgs)
	}
	env.Settle(t)
	for _, m := range env.Telegram.Messages() {
		if m.ChatID == group {
			t.Fatalf("a message went to the group: %q", m.Text)
		}
	}
	if strings.Count(env.Logs.String(), password) > 0 {
		t.Error("the daemon's log holds the root password")
	}
	if !strings.Contains(env.Logs.String(), "goes only to its owner's private chat") {
		t.Errorf("the refusal is not in the log:\n%s", env.Logs.String())
	}
}
