package engine_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/engine"
	"github.com/hangarhq/hangar/engine/cloud"
	linodefake "github.com/hangarhq/hangar/internal/fakes/linode"
	vultrfake "github.com/hangarhq/hangar/internal/fakes/vultr"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

func authorizedKey(t testing.TB, pub any, comment string) string {
	t.Helper()
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k))) + " " + comment
}

// A user registers an SSH public key once with /sshkey; their servers are then created
// with it, at Linode as authorized_keys and at Vultr as a key registered through its
// /v2/ssh-keys API and named by id.
func TestServersAreCreatedWithTheUsersSSHKey(t *testing.T) {
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key := authorizedKey(t, edPub, "ada@laptop")
	for _, tc := range []struct {
		name, spec, region string
		provider           func(t *testing.T) (engine.Provider, func(label string) []string)
	}{
		{"linode", "linode-nano", "ap-northeast", func(t *testing.T) (engine.Provider, func(string) []string) {
			fake := linodefake.New("linode-key-test")
			t.Cleanup(fake.Close)
			p, err := cloud.NewLinode("linode-key-test", fake.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return p, func(label string) []string {
				for _, in := range fake.Instances() {
					if in.Label == label {
						return in.AuthorizedKeys
					}
				}
				return nil
			}
		}},
		{"vultr", "vultr-1g", "nrt", func(t *testing.T) (engine.Provider, func(string) []string) {
			fake := vultrfake.New("vultr-key-test")
			t.Cleanup(fake.Close)
			p, err := cloud.NewVultr("vultr-key-test", fake.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return p, func(label string) []string {
				var out []string
				for _, in := range fake.Instances() {
					if in.Label == label {
						for _, id := range in.SSHKeyIDs {
							k, _ := fake.SSHKey(id)
							out = append(out, k)
						}
					}
				}
				return out
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov, installed := tc.provider(t)
			env := hangartest.Start(t, hangartest.Options{Providers: map[string]engine.Provider{tc.name: prov}})
			env.Deposit(t, 42, 1_000_000)
			env.PostUpdate(t, hangartest.Update(1, 42, "/sshkey command=\"rm -rf /\" "+key))
			if msgs, ok := waitChatText(env, 42, "registered", 10*time.Second); !ok {
				t.Fatalf("no confirmation of the key; messages: %q", msgs)
			}
			first := env.Order(t, 42, tc.spec, tc.region)
			env.WaitStatus(t, first, store.OrderActive, 10*time.Second)
			if got := installed(engine.InstanceLabel(first)); len(got) != 1 || got[0] != key {
				t.Fatalf("server created with keys %q, want [%q] (options dropped)", got, key)
			}
			// A second server reuses the registered key (Vultr: the same id).
			second := env.Order(t, 42, tc.spec, tc.region)
			env.WaitStatus(t, second, store.OrderActive, 10*time.Second)
			if got := installed(engine.InstanceLabel(second)); len(got) != 1 || got[0] != key {
				t.Fatalf("second server created with keys %q", got)
			}
			// Removed: the next server has none.
			env.PostUpdate(t, hangartest.Update(2, 42, "/sshkey remove"))
			if msgs, ok := waitChatText(env, 42, "forgotten", 10*time.Second); !ok {
				t.Fatalf("no confirmation of the removal; messages: %q", msgs)
			}
			third := env.Order(t, 42, tc.spec, tc.region)
			env.WaitStatus(t, third, store.OrderActive, 10*time.Second)
			if got := installed(engine.InstanceLabel(third)); len(got) != 0 {
				t.Fatalf("server created after the removal with keys %q", got)
			}
		})
	}
}

// /sshkey refuses what is not one sound public key, and says why.
func TestSSHKeyCommandRefusesBadKeys(t *testing.T) {
	rsaSmall, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	ed := authorizedKey(t, edPub, "me")
	for _, tc := range []struct {
		name, text, want string
	}{
		{"not a key", "hello there", "not an SSH public key"},
		{"private key", "-----BEGIN OPENSSH PRIVATE KEY-----", "not an SSH public key"},
		{"weak rsa", authorizedKey(t, &rsaSmall.PublicKey, "old"), "1024 bits"},
		{"two keys", ed + "\n" + ed, "one key at a time"},
		{"too long", "ssh-ed25519 " + strings.Repeat("A", 9000), "too long"},
		{"ecdsa is fine", authorizedKey(t, &ecKey.PublicKey, "ec"), "registered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := hangartest.Start(t, hangartest.Options{})
			env.PostUpdate(t, hangartest.Update(1, 42, "/sshkey "+tc.text))
			if msgs, ok := waitChatText(env, 42, tc.want, 10*time.Second); !ok {
				t.Fatalf("reply to /sshkey %.40q: %q, want one saying %q", tc.text, msgs, tc.want)
			}
			_, err := env.Store.GetSSHKey(42)
			if registered := err == nil; registered != (tc.want == "registered") {
				t.Fatalf("key stored: %v", registered)
			}
		})
	}
}

// FuzzSSHKeyCommand sends arbitrary /sshkey arguments: the bot answers every one, never
// panics, and stores only a key that parses back to itself.
func FuzzSSHKeyCommand(f *testing.F) {
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	for _, seed := range []string{
		authorizedKey(f, edPub, "me@host"), authorizedKey(f, edPub, "\u202eevil"), "", "remove", "ssh-ed25519", "ssh-ed25519 AAAA",
		"command=\"x\" " + authorizedKey(f, edPub, ""), "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQ", "\x00", "ssh-dss AAAAB3NzaC1kc3M=",
	} {
		f.Add(seed)
	}
	env := hangartest.Start(f, hangartest.Options{RateLimit: 1 << 30})
	var id int64
	f.Fuzz(func(t *testing.T, arg string) {
		id++
		before := len(env.Telegram.Messages())
		if r := env.PostUpdate(t, hangartest.Update(id, 42, "/sshkey "+arg)); r.Status != 200 {
			t.Fatalf("webhook: %d %s", r.Status, r.Body)
		}
		env.Settle(t)
		if len(env.Telegram.Messages()) <= before {
			t.Fatalf("/sshkey %q got no answer", arg)
		}
		k, err := env.Store.GetSSHKey(42)
		if err != nil {
			return
		}
		pub, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(k.Key))
		if err != nil || ssh.FingerprintSHA256(pub) != k.Fingerprint || strings.ContainsAny(comment, "\n\r") {
			t.Fatalf("stored key %q does not parse back (%v)", k.Key, err)
		}
		if n := env.Metric(t, fmt.Sprintf(`hangar_actor_panics_total{kind=%q}`, "user")); n != 0 {
			t.Fatalf("/sshkey %q: the user actor panicked", arg)
		}
	})
}
