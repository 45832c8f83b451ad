package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// adminClient is the operator CLI's way to the admin API: the same requests the
// console and scripts make, so the CLI needs nothing the API does not offer.
type adminClient struct {
	addr, token string
	http        *http.Client
}

func adminFlags(name string) (*flag.FlagSet, *adminClient) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := &adminClient{http: &http.Client{Timeout: 30 * time.Second}}
	f := &envFlags{fs: fs}
	f.String(&c.addr, "addr", "HANGAR_CONSOLE_ADDR", "http://127.0.0.1:8080", "daemon address: host:port or a URL")
	f.Secret(&c.token, "token", "HANGAR_ADMIN_TOKEN", "admin token")
	return fs, c
}

func (c *adminClient) do(method, path string, body any) (map[string]any, error) {
	if c.token == "" {
		return nil, errors.New("no admin token: set HANGAR_ADMIN_TOKEN or --token")
	}
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url(path), r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("daemon unreachable at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		return out, fmt.Errorf("%s %s: %d %v", method, path, resp.StatusCode, out["error"])
	}
	return out, nil
}

// runDeposit is `hangar deposit --user ID --amount N`.
func runDeposit(args []string) error {
	fs, c := adminFlags("deposit")
	var user, amount int64
	fs.Int64Var(&user, "user", 0, "user_id to credit (the account; for a user met only through the bot, their Telegram id)")
	fs.Int64Var(&amount, "amount", 0, "amount in minor units of the catalogue's currency")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar deposit --user ID --amount N [--addr HOST:PORT|URL]\n\nCredits a user's balance through the admin API.\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if user <= 0 || amount <= 0 {
		fs.Usage()
		return errors.New("--user and --amount must be positive")
	}
	out, err := c.do(http.MethodPost, fmt.Sprintf("/admin/users/%d/deposit", user), map[string]int64{"amount": amount})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "user %d: available %v, held %v\n", user, out["available"], out["held"])
	return nil
}

// runDLQ is `hangar dlq [list|requeue [ID]|purge]`.
func runDLQ(args []string) error {
	fs, c := adminFlags("dlq")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: hangar dlq [flags] list | requeue [ORDER_ID] | purge\n\n")
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		rest = []string{"list"}
	}
	if max := map[string]int{"list": 1, "requeue": 2, "purge": 1}[rest[0]]; max > 0 && len(rest) > max {
		return fmt.Errorf("dlq %s: unexpected argument %q", rest[0], rest[max])
	}
	switch rest[0] {
	case "list":
		out, err := c.do(http.MethodGet, "/admin/dlq", nil)
		if err != nil {
			return err
		}
		letters, _ := out["dead_letters"].([]any)
		fmt.Printf("%d dead letters\n", len(letters))
		for _, l := range letters {
			o, _ := l.(map[string]any)
			fmt.Printf("#%v\t%v\tattempts %v\t%v\n", o["order_id"], o["spec_id"], o["attempts"], o["error_message"])
		}
	case "requeue":
		path := "/admin/dlq/requeue"
		if len(rest) > 1 {
			path = "/admin/dlq/" + rest[1] + "/requeue"
		}
		out, err := c.do(http.MethodPost, path, nil)
		if err != nil {
			return err
		}
		if n, ok := out["requeued"]; ok {
			fmt.Printf("requeued %v\n", n)
		} else {
			fmt.Printf("order #%v is %v\n", out["order_id"], out["status"])
		}
	case "purge":
		out, err := c.do(http.MethodDelete, "/admin/dlq", nil)
		if err != nil {
			return err
		}
		fmt.Printf("purged %v\n", out["purged"])
	default:
		fs.Usage()
		return fmt.Errorf("unknown dlq action %q", rest[0])
	}
	return nil
}
