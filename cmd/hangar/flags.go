package main

import (
	"flag"
	"fmt"
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

func (e *envFlags) env(name string) (string, bool) {
	v, ok := os.LookupEnv(name)
	return v, ok && v != ""
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

func (s *sizeValue) String() string { return strconv.Itoa(int(*s)) }
func (s *sizeValue) Set(v string) error {
	n, err := parseSize(v)
	*s = sizeValue(n)
	return err
}

// parseSize reads "1MiB", "512KiB", "64kB", "1048576".
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
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a size such as 1MiB")
	}
	return n * mult, nil
}
