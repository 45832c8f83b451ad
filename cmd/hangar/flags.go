package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// envFlags registers flags whose defaults come from HANGAR_* environment variables,
// so that flags win over the environment, which wins over the built-in default.
type envFlags struct {
	fs   *flag.FlagSet
	errs []error
}

// knownEnv holds every HANGAR_* variable some command reads, so that serve can warn
// about the ones nobody reads (a misspelt HANGAR_ADMIN_TOKNE is otherwise silently
// ignored).
var knownEnv = map[string]bool{
	"HANGAR_CONSOLE_ADDR": true, // the admin commands' daemon address
	"HANGAR_DOMAIN":       true, // deploy/compose.yaml and the Caddyfile
}

func (e *envFlags) env(name string) (string, bool) {
	knownEnv[name] = true
	v, ok := os.LookupEnv(name)
	return v, ok && v != ""
}

// unknownEnv lists the HANGAR_* variables set in environ that no flag reads, each
// with the known name it most resembles.
func unknownEnv(environ []string) [][2]string {
	var out [][2]string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HANGAR_") || knownEnv[name] {
			continue
		}
		best, bestD := "", 1<<30
		for k := range knownEnv {
			if d := editDistance(name, k); d < bestD || (d == bestD && k < best) {
				best, bestD = k, d
			}
		}
		if bestD > len(name)/3 {
			best = ""
		}
		out = append(out, [2]string{name, best})
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseArgs parses args with fs. A request for help (-h, -help, --help) prints the
// usage to stdout, so that `hangar serve --help | less` shows it, and returns
// flag.ErrHelp; mistakes go to stderr with the usage.
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	return parse(fs, args, stdout, stderr, true)
}

// parseTextArgs is parseArgs for a command whose arguments are free text (`hangar
// telegram send TEXT...`): flags come before the text, and the text is kept whole,
// even a word of it that names a flag.
func parseTextArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	return parse(fs, args, stdout, stderr, false)
}

func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, anywhere bool) error {
	for _, a := range args {
		if a == "--" || !anywhere && !strings.HasPrefix(a, "-") {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fs.SetOutput(stdout)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	fs.SetOutput(stderr)
	if !anywhere {
		return fs.Parse(args)
	}
	ordered, err := flagsFirst(fs, args)
	if err != nil {
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
		return err
	}
	return fs.Parse(ordered)
}

// flagsFirst moves fs's flags ahead of the positional arguments, so that a flag after
// one is read, not taken as an argument: Go's flag package stops at the first
// positional, and `hangar dlq purge --addr B` purged the daemon of the environment's
// address. After the first positional only names fs defines move (a message word
// such as "-5" stays where it is); before it, an unknown flag stays a flag, for Parse
// to refuse. Everything after "--" stays an argument.
func flagsFirst(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil && len(rest) > 0 {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		if f == nil || inline {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 >= len(args) {
			// Left for Parse, it would take the "--" put before the arguments as the
			// value: `hangar serve --data` ran on a data directory named "--".
			return nil, fmt.Errorf("flag needs an argument: %s", a)
		}
		i++
		flags = append(flags, args[i])
	}
	return append(append(flags, "--"), rest...), nil
}

func (e *envFlags) usage(text, env string) string { return text + " (env " + env + ")" }

func (e *envFlags) String(p *string, name, env, def, text string) {
	if v, ok := e.env(env); ok {
		def = v
	}
	e.fs.StringVar(p, name, def, e.usage(text, env))
}

// Secret is a string flag whose default (from the environment) is never printed.
func (e *envFlags) Secret(p *string, name, env, text string) {
	v, _ := e.env(env)
	*p = v
	e.fs.Var((*secretValue)(p), name, e.usage(text, env))
}

func (e *envFlags) Int(p *int, name, env string, def int, text string) {
	if v, ok := e.env(env); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a whole number", env, v))
		} else {
			def = n
		}
	}
	e.fs.IntVar(p, name, def, e.usage(text, env))
}

func (e *envFlags) Int64(p *int64, name, env string, def int64, text string) {
	if v, ok := e.env(env); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a whole number", env, v))
		} else {
			def = n
		}
	}
	e.fs.Int64Var(p, name, def, e.usage(text, env))
}

func (e *envFlags) Float(p *float64, name, env string, def float64, text string) {
	if v, ok := e.env(env); ok {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a number", env, v))
		} else {
			def = n
		}
	}
	e.fs.Float64Var(p, name, def, e.usage(text, env))
}

func (e *envFlags) Bool(p *bool, name, env string, def bool, text string) {
	if v, ok := e.env(env); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not true or false", env, v))
		} else {
			def = b
		}
	}
	e.fs.BoolVar(p, name, def, e.usage(text, env))
}

func (e *envFlags) Duration(p *time.Duration, name, env string, def time.Duration, text string) {
	if v, ok := e.env(env); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a duration such as 60s", env, v))
		} else {
			def = d
		}
	}
	e.fs.DurationVar(p, name, def, e.usage(text, env))
}

func (e *envFlags) Size(p *int, name, env, def, text string) {
	if v, ok := e.env(env); ok {
		def = v
	}
	n, err := parseSize(def)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: %w", env, def, err))
	}
	*p = n
	e.fs.Var((*sizeValue)(p), name, e.usage(text, env))
}

type secretValue string

func (s *secretValue) String() string     { return "" }
func (s *secretValue) Set(v string) error { *s = secretValue(v); return nil }

type sizeValue int

func (s *sizeValue) String() string { return formatSize(int(*s)) }

// formatSize writes n in the largest binary unit that divides it (1048576 → 1MiB), as
// the flags are documented.
func formatSize(n int) string {
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.Itoa(n/u.mult) + u.suffix
		}
	}
	return strconv.Itoa(n)
}
func (s *sizeValue) Set(v string) error {
	n, err := parseSize(v)
	*s = sizeValue(n)
	return err
}

// parseSize reads "1MiB", "512KiB", "64kB", "1048576", "0".
func parseSize(v string) (int, error) {
	v = strings.TrimSpace(v)
	units := []struct {
		suffix string
		mult   int
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"KB", 1e3}, {"B", 1}}
	mult := 1
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size such as 1MiB")
	}
	if n > math.MaxInt/mult {
		// n * mult would wrap: 17179869184GiB was read as 0, switching the
		// free-space floor off.
		return 0, fmt.Errorf("too large a size")
	}
	return n * mult, nil
}
