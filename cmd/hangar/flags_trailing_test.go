package main

import (
	"flag"
	"io"
	"testing"
)

// A flag that takes a value, written last with its value forgotten, was refused by
// Go's flag package ("flag needs an argument: -data"). flagsFirst appends "--" after
// the flags it moved, and Parse takes that "--" as the missing value: `hangar serve
// --data` now starts a daemon on the directory "./--", and `hangar restore FILE
// --data` restores into "./--" instead of refusing.
func TestTrailingFlagWithoutValueIsRefused(t *testing.T) {
	clearHangarEnv(t)
	c, err := parseServeFlagsTo([]string{"--data"}, io.Discard, io.Discard)
	if err == nil {
		t.Errorf("hangar serve --data: accepted, data directory %q; want \"flag needs an argument\"", c.DataDir)
	}

	// hangar restore's flags, parsed as runRestore parses them.
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	var dir string
	fs.StringVar(&dir, "data", "", "")
	err = parseArgs(fs, []string{"old.backup", "--data"}, io.Discard, io.Discard)
	if err == nil && dir != "" {
		// (runRestore refuses an empty --data; "--" it takes as a directory.)
		t.Errorf("hangar restore old.backup --data: accepted, restoring %v into %q; want \"flag needs an argument\"", fs.Args(), dir)
	}
}
