// Command load is the loopback load generator `make bench` drives hangar and its peer anchors with,
// so that both sides of every ratio get the same load from the same program. Modes: webhook
// (Telegram updates over many users), orders (POST /orders, then wait until /admin/queue shows the
// queue drained), views (blog view counting over many IPs).
//
// Besides its human-readable figures it prints lines internal/bench parses: "PHASE load" when the
// timed part starts (after the orders mode's deposits), "PHASE drain" when the last order was
// answered, "RESULT rate=R p50=NS p99=NS non2xx=N" and, in orders mode, "COMPLETED rate=R".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	mode := flag.String("mode", "webhook", "webhook | orders | views")
	url := flag.String("url", "http://127.0.0.1:8080", "hangar base URL")
	secret := flag.String("secret", "bar-secret", "webhook secret / bearer")
	admin := flag.String("admin", "bar-admin-token-0123456", "admin token")
	n := flag.Int("n", 50000, "requests")
	c := flag.Int("c", 64, "concurrent clients")
	users := flag.Int("users", 10000, "distinct users / IPs")
	spec := flag.String("spec", "1", "spec_id for orders")
	region := flag.String("region", "tokyo", "region for orders")
	flag.Parse()

	if *mode == "orders" {
		if err := depositAll(*url, *admin, *users); err != nil {
			fmt.Println("deposit:", err)
			os.Exit(1)
		}
	}
	fmt.Println("PHASE load")
	lat := make([]time.Duration, *n)
	var bad atomic.Int64
	var firstBad atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < *c; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			cl := &fasthttp.Client{MaxConnsPerHost: 4}
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			for i := g; i < *n; i += *c {
				req.Reset()
				req.Header.SetMethod("POST")
				req.Header.SetContentType("application/json")
				u := i % *users
				switch *mode {
				case "webhook":
					req.SetRequestURI(*url + "/webhook")
					req.Header.Set("X-Telegram-Bot-Api-Secret-Token", *secret)
					req.SetBodyString(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"from":{"id":%d,"is_bot":false,"first_name":"T"},"chat":{"id":%d,"type":"private"},"date":%d,"text":"hello"}}`, 100000+i, i, 100000+u, 100000+u, time.Now().Unix()))
				case "orders":
					req.SetRequestURI(*url + "/orders")
					req.Header.Set("Authorization", "Bearer "+*secret)
					req.SetBodyString(fmt.Sprintf(`{"user_id":%d,"telegram_user_id":"%d","spec_id":"%s","region":"%s"}`, u+1, u+1, *spec, *region))
				case "views":
					req.SetRequestURI(fmt.Sprintf("%s/api/views/post-%d", *url, i%1000))
					req.Header.Set("CF-Connecting-IP", fmt.Sprintf("10.%d.%d.%d", u>>16&255, u>>8&255, u&255))
				}
				t := time.Now()
				err := cl.Do(req, resp)
				lat[i] = time.Since(t)
				if err != nil || resp.StatusCode() >= 300 {
					if bad.Add(1) == 1 {
						firstBad.Store(fmt.Sprintf("%v %d %s", err, resp.StatusCode(), resp.Body()))
					}
				}
			}
		}(g)
	}
	wg.Wait()
	el := time.Since(start)
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rate := float64(*n) / el.Seconds()
	fmt.Printf("%s: %d req in %v = %.0f req/s, p50 %v p99 %v, non-2xx %d\n", *mode, *n, el.Round(time.Millisecond), rate, sorted[*n/2], sorted[*n*99/100], bad.Load())
	fmt.Printf("RESULT rate=%.0f p50=%d p99=%d non2xx=%d\n", rate, sorted[*n/2], sorted[*n*99/100], bad.Load())
	if b := firstBad.Load(); b != nil {
		fmt.Fprintf(os.Stderr, "first failure: %.200s\n", b)
	}
	if *mode == "orders" && bad.Load() > 0 {
		fmt.Printf("%d orders refused\n", bad.Load())
		os.Exit(1)
	}
	if *mode == "orders" {
		fmt.Println("PHASE drain")
		// wait for the queue to drain: depth and in_flight both zero
		cl := &fasthttp.Client{}
		for time.Since(start) < 120*time.Second {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			req.SetRequestURI(*url + "/admin/queue")
			req.Header.Set("Authorization", "Bearer "+*admin)
			if err := cl.Do(req, resp); err == nil {
				var q map[string]any
				if json.Unmarshal(resp.Body(), &q) == nil && num(q["depth"]) == 0 && num(q["in_flight"]) == 0 {
					tot := time.Since(start)
					fmt.Printf("orders completed: %d in %v = %.0f orders/s end to end\n", *n, tot.Round(time.Millisecond), float64(*n)/tot.Seconds())
					fmt.Printf("COMPLETED rate=%.0f\n", float64(*n)/tot.Seconds())
					fmt.Printf("RATE %.0f\n", rate)
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		fmt.Println("queue did not drain in 120 s")
		os.Exit(1)
	}
	fmt.Printf("RATE %.0f\n", rate)
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case map[string]any:
		return num(x["value"])
	}
	return -1
}

// depositAll funds users 1..users through the admin API before the timed phase (hangar holds
// each order's price; the anchor has no money at all).
func depositAll(url, admin string, users int) error {
	var wg sync.WaitGroup
	var failed atomic.Value
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			cl := &fasthttp.Client{}
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			for u := g + 1; u <= users; u += 16 {
				req.Reset()
				req.Header.SetMethod("POST")
				req.Header.SetContentType("application/json")
				req.Header.Set("Authorization", "Bearer "+admin)
				req.SetRequestURI(fmt.Sprintf("%s/admin/users/%d/deposit", url, u))
				req.SetBodyString(`{"amount":100000000}`)
				if err := cl.Do(req, resp); err != nil || resp.StatusCode() >= 300 {
					failed.Store(fmt.Sprintf("user %d: %v %d %.200s", u, err, resp.StatusCode(), resp.Body()))
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		return fmt.Errorf("%s", f)
	}
	return nil
}
