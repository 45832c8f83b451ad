package main

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// The SSH console can be switched off from the environment as from the command line:
// an empty HANGAR_* counts as unset (so the env template's empty lines keep the
// defaults), and the image's ENV sets 0.0.0.0:2222, so a systemd EnvironmentFile or
// `docker run -e` had no value that turned the console off.
func TestSSHConsoleSwitchedOffFromTheEnvironment(t *testing.T) {
	for _, v := range []string{"off", "OFF", "none"} {
		clearHangarEnv(t)
		t.Setenv("HANGAR_SSH_ADDR", v)
		c, err := parseServeFlagsTo(nil, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.SSHAddr != "" {
			t.Fatalf("HANGAR_SSH_ADDR=%s leaves the SSH console on at %q", v, c.SSHAddr)
		}
	}
	clearHangarEnv(t)
	if c, err := parseServeFlagsTo([]string{"--ssh", "off"}, io.Discard); err != nil || c.SSHAddr != "" {
		t.Fatalf("--ssh off: %q, %v", c.SSHAddr, err)
	}
}

// parseSize multiplies without checking for overflow: a size past the int range wraps
// around and is accepted without a word. 17179869184GiB (2^64 bytes) wraps to 0,
// which for --min-free-disk means "the check is off": the free-space floor that keeps
// Badger from a SIGBUS on a full disk is switched off by a typo of a huge value.
// 8589934592GiB (2^63) wraps negative and is refused only by validate's "must not be
// negative", which names the wrong problem.
func TestSizeOverflowIsRefused(t *testing.T) {
	for _, v := range []string{"17179869184GiB", "18446744073709551616", "9223372036854775807KiB"} {
		n, err := parseSize(v)
		if err == nil {
			t.Errorf("parseSize(%q) = %d with no error; a size past the int range must be refused", v, n)
		}
	}
	clearHangarEnv(t)
	c, err := parseServeFlagsTo([]string{"--min-free-disk", "17179869184GiB"}, io.Discard)
	if err == nil {
		t.Fatalf("--min-free-disk 17179869184GiB accepted: the floor is %d bytes (0 turns the check off)", c.Storage.MinFree)
	}
}

func TestFlagsAfterArgumentsAreRead(t *testing.T) {
	cases := []struct {
		args      []string
		wantAddr  string
		wantJSON  bool
		wantArgs  []string
		wantError bool
	}{
		{[]string{"purge", "--addr", "http://b"}, "http://b", false, []string{"purge"}, false},
		{[]string{"--addr=http://b", "requeue", "7"}, "http://b", false, []string{"requeue", "7"}, false},
		{[]string{"requeue", "7", "-json"}, "http://a", true, []string{"requeue", "7"}, false},
		{[]string{"send", "it", "is", "-5", "outside"}, "http://a", false, []string{"send", "it", "is", "-5", "outside"}, false},
		{[]string{"send", "--", "--addr", "x"}, "http://a", false, []string{"send", "--addr", "x"}, false},
		{[]string{"--adr", "http://b", "purge"}, "", false, nil, true},
	}
	for _, tc := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		addr := fs.String("addr", "http://a", "")
		asJSON := fs.Bool("json", false, "")
		ordered, err := flagsFirst(fs, tc.args)
		if err == nil {
			err = fs.Parse(ordered)
		}
		if tc.wantError {
			if err == nil {
				t.Errorf("%q: parsed, want the unknown flag refused", tc.args)
			}
			continue
		}
		if err != nil || *addr != tc.wantAddr || *asJSON != tc.wantJSON || !slices.Equal(fs.Args(), tc.wantArgs) {
			t.Errorf("%q: addr %q json %v args %q (%v), want %q %v %q", tc.args, *addr, *asJSON, fs.Args(), err, tc.wantAddr, tc.wantJSON, tc.wantArgs)
		}
	}
}

// A command of free text (`hangar telegram send TEXT...`) keeps its text whole, even a
// word that names one of its flags; its flags come before the text.
func TestTextArgumentsKeepWordsThatNameFlags(t *testing.T) {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "http://a", "")
	from := fs.Int64("from", 0, "")
	if err := parseTextArgs(fs, []string{"--from", "7", "set", "--addr", "first"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if *from != 7 || *addr != "http://a" || !slices.Equal(fs.Args(), []string{"set", "--addr", "first"}) {
		t.Fatalf("from %d addr %q text %q", *from, *addr, fs.Args())
	}
}
