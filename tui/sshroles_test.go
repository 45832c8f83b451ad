package tui_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/hangarhq/hangar/internal/sshtest"
	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/internal/fakedaemon"
)

func keyLine(t *testing.T, s gossh.Signer, comment string) []byte {
	t.Helper()
	return []byte(strings.TrimSpace(string(gossh.MarshalAuthorizedKey(s.PublicKey()))) + " " + comment + "\n")
}

// A key in the viewers' file gets a read-only console and the daemon is asked for
// with the key's role, fingerprint and comment; a key in both files is a viewer; an
// operator's key gets an operator's console.
func TestSSHRolesFromKeyFiles(t *testing.T) {
	dir := t.TempDir()
	operator, viewer, both := sshtest.NewSigner(t), sshtest.NewSigner(t), sshtest.NewSigner(t)
	ops := append(keyLine(t, operator, "alice@laptop"), keyLine(t, both, "dave@old")...)
	views := append(keyLine(t, viewer, "carol@desk"), keyLine(t, both, "dave@demoted")...)
	for name, data := range map[string][]byte{"authorized_keys": ops, "viewer_keys": views} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var asked []tui.Identity
	srv, err := tui.NewSSHServer(tui.SSHConfig{
		Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(dir, "host"),
		AuthorizedKeysPath: filepath.Join(dir, "authorized_keys"), ViewerKeysPath: filepath.Join(dir, "viewer_keys"),
		DaemonFor: func(id tui.Identity) (tui.Daemon, error) {
			mu.Lock()
			asked = append(asked, id)
			mu.Unlock()
			return fakedaemon.New(), nil // answers whoami as an operator: the key's role must hold anyway
		},
		Logger: slog.New(slog.DiscardHandler),
		Console: func(o *tui.Options) {
			o.Now = func() time.Time { return fakedaemon.Now }
			o.Frame = 10 * time.Millisecond
		},
	})
	startSSH(t, srv, err)
	tests := []struct {
		name    string
		key     gossh.Signer
		want    tui.Identity
		showsRO bool
	}{
		{"operator", operator, tui.Identity{Role: "operator", Fingerprint: gossh.FingerprintSHA256(operator.PublicKey()), Comment: "alice@laptop"}, false},
		{"viewer", viewer, tui.Identity{Role: "viewer", Fingerprint: gossh.FingerprintSHA256(viewer.PublicKey()), Comment: "carol@desk"}, true},
		{"in both files", both, tui.Identity{Role: "viewer", Fingerprint: gossh.FingerprintSHA256(both.PublicKey()), Comment: "dave@demoted"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			c, err := sshtest.Dial(srv.Addr().String(), tt.key, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, scr, in := sshtest.Console(t, c)
			scr.WaitFor(t, "queue depth")
			if _, err := in.Write([]byte("p")); err != nil {
				t.Fatal(err)
			}
			if tt.showsRO {
				scr.WaitFor(t, "viewer: read-only")
				scr.WaitFor(t, "nothing was sent")
			} else {
				scr.WaitFor(t, "(y/n)")
				if scr.Shows("read-only") {
					t.Error("an operator's console says read-only")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0] != tt.want {
				t.Fatalf("daemon asked for %+v, want %+v", asked, tt.want)
			}
			if want := tt.want.Fingerprint + " " + tt.want.Comment; asked[0].Actor() != want {
				t.Errorf("actor %q, want %q", asked[0].Actor(), want)
			}
		})
	}
}

// When the viewers' file exists but cannot be read, every key is refused: a key
// listed there may also be in authorized_keys (an operator demoted), and it came back
// as an operator.
func TestSSHUnreadableViewerKeysRefuseEveryone(t *testing.T) {
	dir := t.TempDir()
	demoted := sshtest.NewSigner(t)
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), keyLine(t, demoted, "dave@old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "viewer_keys"), 0o700); err != nil { // exists, reads fail
		t.Fatal(err)
	}
	asked := make(chan tui.Identity, 1)
	srv, err := tui.NewSSHServer(tui.SSHConfig{
		Addr: "127.0.0.1:0", HostKeyPath: filepath.Join(dir, "host"),
		AuthorizedKeysPath: filepath.Join(dir, "authorized_keys"), ViewerKeysPath: filepath.Join(dir, "viewer_keys"),
		DaemonFor: func(id tui.Identity) (tui.Daemon, error) {
			asked <- id
			return fakedaemon.New(), nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	startSSH(t, srv, err)
	if c, err := sshtest.Dial(srv.Addr().String(), demoted, nil); err == nil {
		c.Close()
		select {
		case id := <-asked:
			t.Fatalf("viewer_keys unreadable, and a key got in as %+v", id)
		case <-time.After(time.Second):
			t.Fatal("viewer_keys unreadable, and a key got in")
		}
	}
}

// startSSH starts srv (made with err) for the test and stops it after.
func startSSH(t *testing.T, srv *tui.SSHServer, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}
