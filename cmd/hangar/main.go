package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `hangar — Telegram bot backend, provisioning queue and blog API in one daemon.

Usage:
  hangar serve [flags]      run the daemon with embedded defaults (see hangar serve --help)
  hangar console [flags]    attach the operations console to a running daemon
  hangar deposit --user ID --amount N    credit a user's balance
  hangar dlq [list|requeue [ID]|purge]   inspect and act on dead letters
  hangar backup FILE        consistent snapshot of a running daemon (- for stdout)
  hangar restore --data DIR FILE         restore a backup into an empty directory
  hangar repair --data DIR  cut a damaged write-ahead log at the damage (hangar stopped)
  hangar telegram setup --url URL | info | delete   connect the bot to hangar
  hangar version            module version, VCS revision and Go version of this binary
  hangar health             exit 0 if the daemon's /health is ok (the image's HEALTHCHECK)
  hangar help               show this text

Every flag of serve is also an environment variable (HANGAR_*); flags win.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = runServe(os.Args[2:])
	case "console":
		err = runConsole(os.Args[2:])
	case "deposit":
		err = runDeposit(os.Args[2:])
	case "dlq":
		err = runDLQ(os.Args[2:])
	case "backup":
		err = runBackup(os.Args[2:])
	case "restore":
		err = runRestore(os.Args[2:])
	case "repair":
		err = runRepair(os.Args[2:])
	case "telegram":
		err = runTelegram(os.Args[2:])
	case "version", "--version":
		err = runVersion(os.Args[2:])
	case "health":
		err = runHealth(os.Args[2:])
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "hangar: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return // the subcommand printed its usage
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hangar:", err)
		os.Exit(1)
	}
}
