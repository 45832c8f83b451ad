package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// buildInfo describes this binary from what the Go toolchain stamped into it: the
// module version (a tag when built with `go install ...@vX`), the VCS revision and
// whether the tree was modified, and the Go version.
func buildInfo() string {
	version, revision, modified, when := "(devel)", "unknown", false, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	if modified {
		revision += " (modified)"
	}
	out := fmt.Sprintf("hangar %s\nrevision %s\n", version, revision)
	if when != "" {
		out += "committed " + when + "\n"
	}
	return out + fmt.Sprintf("built with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// runVersion is `hangar version`.
func runVersion(args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	fmt.Print(buildInfo())
	return nil
}

// runHealth is `hangar health`: asks a daemon's public /health and exits non-zero
// unless it is ok. It is the container image's HEALTHCHECK (the image holds no curl).
func runHealth(args []string) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(os.Stdout)
	f := &envFlags{fs: fs}
	var addr string
	var timeout time.Duration
	f.String(&addr, "http", "HANGAR_HTTP_ADDR", "127.0.0.1:8080", "the daemon's HTTP listen address (host:port or URL)")
	fs.DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar health [--http ADDR]\n\nExits 0 if the daemon's /health answers ok, 1 otherwise.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	if len(f.errs) > 0 {
		return errors.Join(f.errs...)
	}
	if !strings.Contains(addr, "://") {
		// A wildcard listen address is reached on loopback.
		addr = "http://" + strings.Replace(strings.Replace(addr, "0.0.0.0:", "127.0.0.1:", 1), "[::]:", "[::1]:", 1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(addr, "/")+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	fmt.Println(strings.TrimSpace(string(body)))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s", resp.Status)
	}
	return nil
}
