package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// makeRunToken is the development value the Makefile's run target exports for name.
func makeRunToken(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^run: export ` + name + ` \?= (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the Makefile's run target sets no %s", name)
	}
	return string(m[1])
}

// The README's first order is docs/first-order.sh, run here as a newcomer runs it: in
// a fresh shell with nothing exported but the address, against a daemon holding
// `make run`'s development tokens.
func TestFirstOrderScript(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the script needs curl")
	}
	secret, admin := makeRunToken(t, "HANGAR_WEBHOOK_SECRET"), makeRunToken(t, "HANGAR_ADMIN_TOKEN")
	d := startDaemon(t, t.TempDir(), "HANGAR_WEBHOOK_SECRET="+secret, "HANGAR_ADMIN_TOKEN="+admin,
		"HANGAR_SIM_LATENCY=100ms", "HANGAR_SIM_FAIL_RATE=0")
	cmd := exec.Command("sh", "../../docs/first-order.sh")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANGAR_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HANGAR_HTTP_ADDR="+strings.TrimPrefix(d.URL, "http://"), "FIRST_ORDER_TIMEOUT=30")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/first-order.sh: %v\n%s\n--- daemon:\n%s", err, out, d.logs.String())
	}
	for _, want := range []string{`"available":10000`, `"status":"pending"`, " active\n", `"ip_address":"`, "is active"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the script's output lacks %q:\n%s", want, out)
		}
	}
	for _, s := range []string{secret, admin} {
		if strings.Contains(string(out), s) {
			t.Errorf("the script printed a token:\n%s", out)
		}
	}
}

// Every command the README's "Your first order" shows is one the script runs, word for
// word: the README cannot show a command the test above does not run.
func TestReadmeFirstOrderIsTheScript(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../../docs/first-order.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Your first order\n")
	if !ok {
		t.Fatal(`the README has no "## Your first order" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	shown := 0
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "curl ") && !strings.Contains(line, "$(curl ") {
			continue
		}
		shown++
		if !strings.Contains(string(script), line) {
			t.Errorf("the README shows a command docs/first-order.sh does not run:\n%s", line)
		}
	}
	if shown < 3 || !strings.Contains(section, "sh docs/first-order.sh") {
		t.Fatalf("the README's first order shows %d of the script's commands, or not the script", shown)
	}
}
