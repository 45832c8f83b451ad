package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every hangar command the README shows in a shell block names a subcommand that
// exists and flags that subcommand takes, so the README cannot drift from the binary.
// (The first-order walk-through is run whole by its own test.)
func TestReadmeCommandsExist(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	invocation := regexp.MustCompile(`(?:^|[\s;&|(])(?:\./bin/)?hangar\s+([a-z]+)((?:\s+[^\s#;&|)]+)*)`)
	flag := regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
	helps := map[string]string{}
	inBlock, checked := false, 0
	for n, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = strings.HasPrefix(line, "```sh")
			continue
		}
		if !inBlock {
			continue
		}
		code, _, _ := strings.Cut(line, "#")
		for _, m := range invocation.FindAllStringSubmatch(code, -1) {
			sub, rest := m[1], m[2]
			help, ok := helps[sub]
			if !ok {
				args := []string{sub, "--help"}
				if sub == "telegram" {
					args = []string{"telegram", "help"}
				}
				out, _ := hangarCmd(nil, args...)
				if strings.Contains(out, "unknown command") {
					t.Errorf("README line %d runs `hangar %s`, which does not exist:\n%s", n+1, sub, line)
					continue
				}
				help, helps[sub] = out, out
			}
			for _, f := range flag.FindAllStringSubmatch(rest, -1) {
				if !strings.Contains(help, "-"+f[1]) {
					t.Errorf("README line %d passes --%s to `hangar %s`, which does not take it:\n%s", n+1, f[1], sub, line)
				}
			}
			checked++
		}
	}
	if checked < 5 {
		t.Fatalf("found only %d hangar commands in the README's sh blocks; the pattern is broken", checked)
	}
}
