package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hangarhq/hangar/tui"
	"github.com/hangarhq/hangar/tui/client"
)

// runConsole attaches the operations console to a running daemon over its admin API.
func runConsole(args []string) error {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	f := &envFlags{fs: fs}
	var addr, token string
	f.String(&addr, "addr", "HANGAR_CONSOLE_ADDR", "http://127.0.0.1:8080", "daemon HTTP address")
	f.Secret(&token, "token", "HANGAR_ADMIN_TOKEN", "admin token (prefer the environment: flags show in ps)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar console [flags]\n\nAttaches the operations console to a running daemon. Flags win over the environment.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	if len(f.errs) > 0 {
		return errors.Join(f.errs...)
	}
	if token == "" {
		return errors.New("console: no admin token: set HANGAR_ADMIN_TOKEN or pass --token")
	}
	// Who sits at this console, as the audit log records it: only a claim made with the
	// token, and recorded as one.
	c, err := client.New(addr, token, client.WithIdentity("", localActor()))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := tui.New(tui.Options{Daemon: c, Context: ctx, Target: c.BaseURL()})
	_, err = tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
