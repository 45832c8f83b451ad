package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hangarhq/hangar/internal/hangartest"
)

func TestDepositAndDLQCommands(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	run := func(token string, args ...string) (string, error) {
		cmd := exec.Command(hangarBin, args...)
		cmd.Env = append(os.Environ(), "HANGAR_CONSOLE_ADDR="+d.URL, "HANGAR_ADMIN_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(hangartest.AdminToken, "deposit", "--user", "55", "--amount", "12345")
	if err != nil || !strings.Contains(out, "available 12345") {
		t.Fatalf("deposit: %v\n%s", err, out)
	}
	if out, err := run("wrong-token-wrong-token", "deposit", "--user", "55", "--amount", "1"); err == nil || !strings.Contains(out, "403") {
		t.Fatalf("deposit with a wrong token: %v\n%s", err, out)
	}
	if out, err := run(hangartest.AdminToken, "deposit", "--user", "55"); err == nil || !strings.Contains(out, "must be positive") {
		t.Fatalf("deposit without an amount: %v\n%s", err, out)
	}
	if out, err := run(hangartest.AdminToken, "dlq", "list"); err != nil || !strings.Contains(out, "0 dead letters") {
		t.Fatalf("dlq list: %v\n%s", err, out)
	}
	if strings.Contains(d.logs.String(), hangartest.AdminToken) {
		t.Fatal("the admin token is in the daemon's log")
	}
}

// HANGAR_CONSOLE_ADDR is what `make run` prints (host:port) as often as a URL: every
// admin command takes both.
func TestAdminCommandsTakeHostPortOrURL(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	hostPort := strings.TrimPrefix(d.URL, "http://")
	for _, addr := range []string{hostPort, d.URL, d.URL + "/"} {
		t.Run(addr, func(t *testing.T) {
			env := []string{"HANGAR_CONSOLE_ADDR=" + addr, "HANGAR_ADMIN_TOKEN=" + hangartest.AdminToken}
			if out, err := hangarCmd(env, "deposit", "--user", "7", "--amount", "10"); err != nil || !strings.Contains(out, "user 7: available") {
				t.Fatalf("deposit: %v\n%s", err, out)
			}
			if out, err := hangarCmd(env, "dlq", "list"); err != nil || !strings.Contains(out, "0 dead letters") {
				t.Fatalf("dlq list: %v\n%s", err, out)
			}
			file := t.TempDir() + "/b.hangar"
			if out, err := hangarCmd(env, "backup", file); err != nil {
				t.Fatalf("backup: %v\n%s", err, out)
			}
		})
	}
}
