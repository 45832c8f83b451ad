package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	"github.com/hangarhq/hangar/engine/telegram"
	"github.com/hangarhq/hangar/internal/fakes/fakeapi"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	telegramfake "github.com/hangarhq/hangar/internal/fakes/telegram"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

const linodeToken = "linode-vault-test-token"

// Each root password is random, reaches the provider and the user, and is destroyed
// (its sealed record and the key that sealed it) once the message is sent and the
// /password window has passed: a copy of the data directory taken then holds nothing
// that yields it.
func TestRootPasswordsAreRandomAndDestroyedAfterTheWindow(t *testing.T) {
	dir := t.TempDir()
	linode := linodefake.New(linodeToken)
	defer linode.Close()
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	ve := startVaultEngine(t, dir, linode.URL(), tg, 400*time.Millisecond, 0)
	st, eng, vault, logs := ve.st, ve.eng, ve.vault, ve.logs
	defer ve.stop()
	if _, err := st.Deposit(42, 1_000_000); err != nil {
		t.Fatal(err)
	}
	var passwords []string
	for range 2 {
		o, err := eng.CreateOrder(engine.OrderRequest{UserID: 42, TelegramUserID: 42, SpecID: "linode-nano", Region: "ap-northeast"})
		if err != nil {
			t.Fatal(err)
		}
		hangartest.WaitFor(t, 10*time.Second, "the order to be active", func() bool {
			got, _ := st.GetOrder(o.ID)
			return got.Status == store.OrderActive
		})
		pw, ok := linode.RootPass(engine.InstanceLabel(o.ID))
		if !ok || len(pw) < 16 {
			t.Fatalf("the provider got root password %q", pw)
		}
		if _, ok := tg.WaitMessages(len(passwords)+1, 10*time.Second); !ok {
			t.Fatal("the ready message never arrived")
		}
		if msgs := tg.Messages(); !strings.Contains(msgs[len(msgs)-1].Text, pw) {
			t.Fatalf("the ready message does not carry the password the server was made with: %q", msgs[len(msgs)-1].Text)
		}
		passwords = append(passwords, pw)
	}
	if passwords[0] == passwords[1] {
		t.Fatal("two orders got the same password")
	}
	if derived := engine.NewPasswordDeriver(nil); derived(1) == passwords[0] {
		t.Fatal("the password is derived, not random")
	}

	hangartest.WaitFor(t, 10*time.Second, "the passwords and their keys to be destroyed", func() bool {
		kept, err := st.SealedPasswords()
		return err == nil && len(kept) == 0 && vault.Keys() == 0
	})
	keys, _ := filepath.Glob(filepath.Join(dir, "secrets", "*.key"))
	if len(keys) != 0 {
		t.Fatalf("key files left after the window: %v", keys)
	}
	grepDataDirFor(t, dir, passwords)
	if strings.Contains(logs.String(), passwords[0]) || strings.Contains(logs.String(), passwords[1]) {
		t.Fatal("a root password is in the log")
	}
	// Nothing is left to send again.
	if pw, ok, err := vault.Reveal(1); ok || err != nil || pw != "" {
		t.Fatalf("Reveal after the window = %q, %v, %v", pw, ok, err)
	}
}

// grepDataDirFor is grepDataDir without its control record (the order's plan here is
// linode-nano).
func grepDataDirFor(t *testing.T, dir string, secrets []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
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
}

// The vault gives an order the same password on every attempt and across a restart,
// until the sweep destroys it; orders from before the vault keep their derived one.
func TestVaultKeepsOnePasswordPerOrderUntilSwept(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	legacyKey := []byte("an old password.key of 32 bytes!")
	before := time.Now().Add(-time.Hour)
	v, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, legacyKey)
	if err != nil {
		t.Fatal(err)
	}
	old := store.Order{ID: 7, CreatedAt: before}
	if pw, err := v.Issue(old); err != nil || pw != engine.NewPasswordDeriver(legacyKey)(7) {
		t.Fatalf("an order from before the vault got %q, %v; want its derived password", pw, err)
	}
	fresh := store.Order{ID: 8, CreatedAt: time.Now()}
	first, err := v.Issue(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := v.Issue(fresh); err != nil || again != first {
		t.Fatalf("a second attempt got %q, %v; want %q", again, err, first)
	}
	if first == engine.NewPasswordDeriver(legacyKey)(8) {
		t.Fatal("a new order's password is the derived one")
	}
	v2, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, legacyKey)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok, err := v2.Reveal(8); err != nil || !ok || pw != first {
		t.Fatalf("after a restart Reveal = %q, %v, %v; want %q", pw, ok, err, first)
	}
	// Sent (the outbox records it, which starts the window), and the window long past:
	// the sweep destroys it, and its key.
	if err := st.FinishMessages([]store.Finished{{Message: store.OutboxMessage{ID: 1, ChatID: 8, SecretOrderID: 8}, Status: store.MessageSent}}); err != nil {
		t.Fatal(err)
	}
	if err := v2.Sweep(time.Now().Add(time.Hour), 15*time.Minute, func(int64) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if pw, ok, err := v2.Reveal(8); ok || err != nil {
		t.Fatalf("after the sweep Reveal = %q, %v, %v", pw, ok, err)
	}
	if v2.Keys() != 0 {
		t.Fatalf("%d keys left after the sweep", v2.Keys())
	}
	if _, err := st.GetSealedPassword(8); err == nil {
		t.Fatal("the sealed password is still stored")
	}
}

// vaultEngine is an engine over a Linode fake with its passwords in a Vault, on the
// real clock, sending to a Telegram fake.
type vaultEngine struct {
	st    *store.Store
	eng   *engine.Engine
	vault *engine.Vault
	logs  *hangartest.SyncBuffer
	done  bool
}

func startVaultEngine(t *testing.T, dir, linodeURL string, tg *telegramfake.Server, window, settle time.Duration) *vaultEngine {
	t.Helper()
	logs := &hangartest.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	vault, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := cloud.NewLinode(linodeToken, linodeURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if settle > 0 {
		prov.SetSettle(settle)
	}
	sender, err := telegram.New(hangartest.BotToken, tg.URL())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Logger: log, Registry: prometheus.NewRegistry(), SendInterval: time.Millisecond,
		Providers: map[string]engine.Provider{"linode": prov}, Passwords: vault,
		Queue:     engine.QueueConfig{Tick: 5 * time.Millisecond, PollInterval: 10 * time.Millisecond},
		Reconcile: engine.ReconcileConfig{Every: -1, RetryTerminations: 50 * time.Millisecond},
		Secrets:   engine.SecretsConfig{PasswordWindow: window},
	}, st, sender)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	ve := &vaultEngine{st: st, eng: eng, vault: vault, logs: logs}
	t.Cleanup(ve.stop)
	return ve
}

func (v *vaultEngine) stop() {
	if v.done {
		return
	}
	v.done = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v.eng.Stop(ctx)
	_ = v.st.Close()
}

// An order whose create was cut by a stop sends, after the restart, the password the
// provider got: it was kept sealed across the restart, not made anew.
func TestResumedOrderSendsThePasswordItsServerWasMadeWith(t *testing.T) {
	dir := t.TempDir()
	linode := linodefake.New(linodeToken, fakeapi.WithCreateDelay(400*time.Millisecond), fakeapi.WithDuplicateLabels())
	defer linode.Close()
	tg := telegramfake.New(hangartest.BotToken)
	defer tg.Close()
	first := startVaultEngine(t, dir, linode.URL(), tg, time.Hour, time.Second)
	if _, err := first.st.Deposit(42, 1_000_000); err != nil {
		t.Fatal(err)
	}
	o, err := first.eng.CreateOrder(engine.OrderRequest{UserID: 42, TelegramUserID: 42, SpecID: "linode-nano", Region: "ap-northeast"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the create itself (a first attempt sends it without a find by label).
	created := func() bool {
		for _, r := range linode.Requests() {
			if r.Method == http.MethodPost && r.Path == "/v4/linode/instances" {
				return true
			}
		}
		return false
	}
	if !linode.Wait(10*time.Second, created) {
		t.Fatal("the create never reached the provider")
	}
	first.stop()

	second := startVaultEngine(t, dir, linode.URL(), tg, time.Hour, time.Second)
	hangartest.WaitFor(t, 10*time.Second, "the order to be active", func() bool {
		got, _ := second.st.GetOrder(o.ID)
		return got.Status == store.OrderActive
	})
	pw, ok := linode.RootPass(engine.InstanceLabel(o.ID))
	if !ok {
		t.Fatal("the provider holds no server for the order")
	}
	msgs, ok := tg.WaitMessages(1, 10*time.Second)
	if !ok || !strings.Contains(msgs[0].Text, pw) {
		t.Fatalf("the ready message %+v does not carry the server's password", msgs)
	}
	if n := linode.Count(); n != 1 {
		t.Fatalf("the provider holds %d servers for the order", n)
	}
}

// vaultOrders is the store with every order created at one time, provisioning.
type vaultOrders struct {
	*store.Store
	created time.Time
}

func (f vaultOrders) GetOrder(id int64) (store.Order, error) {
	return store.Order{ID: id, CreatedAt: f.created, Status: store.OrderProvisioning}, nil
}

// A password sealed by a vault whose key is gone (a data directory restored without
// secrets/, with password.key copied across) is reported gone, never replaced by the
// derived password of an order from before the vault: the new vault dates from the
// restore, so every order looked older than it, and the user got a password their
// server did not have instead of "reset it".
func TestLostVaultKeyNeverRevealsADerivedPassword(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	legacy := []byte("an old password.key of 32 bytes!")
	v, err := engine.OpenVault(filepath.Join(dir, "secrets"), vaultOrders{Store: st}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	o := store.Order{ID: 8, CreatedAt: time.Now()} // an order of the vault's time
	if _, err := v.Issue(o); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "secrets")); err != nil { // restored elsewhere
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	again, err := engine.OpenVault(filepath.Join(dir, "secrets"), vaultOrders{Store: st, created: o.CreatedAt}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok, err := again.Reveal(8); ok || err != nil {
		t.Fatalf("Reveal with the sealing key gone = %q, %v, %v; want it reported gone", pw, ok, err)
	}
}

// The vault's opening time outlives a restore without secrets/: an order accepted
// after the vault opened and still waiting for its first create at the restore gets a
// random password, not one derived from password.key (which the data directory holds,
// so anyone with a copy of it could compute the server's password). Kept only in
// secrets/, the time moved to the restore, and every order before it looked older
// than the vault.
func TestVaultTimeSurvivesARestoreWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	legacy := []byte("an old password.key of 32 bytes!")
	derived := engine.NewPasswordDeriver(legacy)
	if _, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, legacy); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	inFlight := store.Order{ID: 9, CreatedAt: time.Now()}               // accepted, not yet created
	if err := os.RemoveAll(filepath.Join(dir, "secrets")); err != nil { // restored elsewhere
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	again, err := engine.OpenVault(filepath.Join(dir, "secrets"), st, legacy)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := again.Issue(inFlight)
	if err != nil {
		t.Fatal(err)
	}
	if pw == derived(inFlight.ID) {
		t.Fatal("an order accepted after the vault opened got the password password.key derives")
	}
	if before := (store.Order{ID: 3, CreatedAt: time.Now().Add(-time.Hour)}); mustIssue(t, again, before) != derived(3) {
		t.Fatal("an order from before the vault lost its derived password")
	}
}

func mustIssue(t *testing.T, v *engine.Vault, o store.Order) string {
	t.Helper()
	pw, err := v.Issue(o)
	if err != nil {
		t.Fatal(err)
	}
	return pw
}
