package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The systemd unit in deploy/ passes `systemd-analyze verify` with its ExecStart
// pointed at the real binary.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed here; skipped")
	}
	unit, err := os.ReadFile("../../deploy/hangar.service")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := filepath.Join(dir, "hangar.env")
	os.WriteFile(env, []byte("HANGAR_ADMIN_TOKEN=0123456789abcdef\n"), 0o600)
	text := strings.ReplaceAll(string(unit), "/usr/local/bin/hangar", hangarBin)
	text = strings.ReplaceAll(text, "/etc/hangar/hangar.env", env)
	path := filepath.Join(dir, "hangar.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	// verify also reports on units it pulls in from the host (network-online.target and
	// the like); only lines about this unit count.
	var ours []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "hangar.service") {
			ours = append(ours, l)
		}
	}
	if len(ours) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, strings.Join(ours, "\n"))
	}
	for _, want := range []string{"DynamicUser=yes", "StateDirectory=hangar", "ProtectSystem=strict", "EnvironmentFile="} {
		if !strings.Contains(text, want) {
			t.Errorf("the unit lacks %s", want)
		}
	}
}

// The Dockerfile builds with cgo off, and every package hangar needs builds without
// cgo: the binary it makes is static and runs on distroless. (docker build itself
// needs a Docker engine, which this machine does not run.)
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	b, err := os.ReadFile("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	build := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .* \./cmd/hangar)$`).FindStringSubmatch(df)
	if build == nil {
		t.Fatalf("the Dockerfile has no `RUN CGO_ENABLED=0 go build ... ./cmd/hangar` line")
	}
	for _, want := range []string{`VOLUME ["/data"]`, "USER nonroot", `HEALTHCHECK`, `CMD ["/hangar", "health"]`, "HANGAR_DATA_DIR=/data"} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,CgoFiles,Error,DepsErrors", "./cmd/hangar")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			CgoFiles   []string
			Error      *struct{ Err string }
			DepsErrors []struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil || len(p.DepsErrors) > 0 || len(p.CgoFiles) > 0 {
			t.Fatalf("%s does not build with CGO_ENABLED=0: %+v %+v %v", p.ImportPath, p.Error, p.DepsErrors, p.CgoFiles)
		}
	}
	compose, err := os.ReadFile("../../deploy/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(compose), `"telegram", "setup", "--url"`) {
		t.Error("compose.yaml does not run hangar telegram setup")
	}
}

// `hangar version` names the module and the Go version; `hangar health` exits 0 for
// a healthy daemon and 1 when none answers.
func TestVersionAndHealthCommands(t *testing.T) {
	out, err := hangarCmd(nil, "version")
	if err != nil || !strings.HasPrefix(out, "hangar ") || !strings.Contains(out, "built with go1.") {
		t.Fatalf("hangar version: %v\n%s", err, out)
	}
	d := startDaemon(t, t.TempDir())
	if out, err := hangarCmd([]string{"HANGAR_HTTP_ADDR=" + strings.TrimPrefix(d.URL, "http://")}, "health"); err != nil || !strings.Contains(out, `"ok"`) {
		t.Fatalf("hangar health against a healthy daemon: %v\n%s", err, out)
	}
	if out, err := hangarCmd([]string{"HANGAR_HTTP_ADDR=" + freeAddr(t)}, "health"); err == nil {
		t.Fatalf("hangar health with no daemon exited 0:\n%s", out)
	}
}
