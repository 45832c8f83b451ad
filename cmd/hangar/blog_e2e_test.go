package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// clientFrom is an HTTP client whose connections leave from ip (any 127.0.0.0/8
// address is this machine's), so that the daemon sees distinct readers by their
// socket address, with no trusted header configured.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 8},
		Timeout:   15 * time.Second,
	}
}

func postView(t *testing.T, c *http.Client, base, slug string) (int, []byte) {
	t.Helper()
	resp, err := c.Post(base+"/api/views/"+url.PathEscape(slug), "application/json", nil)
	if err != nil {
		t.Errorf("POST %s: %v", slug, err)
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// A flood of made-up slugs from one address against a real daemon: that address gets
// its day's share of new slugs and then 429s, and another reader's new post is
// counted; an operator deletes a junk slug and its place is free again.
func TestBlogJunkSlugFloodE2E(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	flooder, reader := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")

	const flood = 400
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				code, body := postView(t, flooder, d.URL, fmt.Sprintf("junk-%d", i))
				if code == http.StatusTooManyRequests && !strings.Contains(string(body), `"code":"new_slug_limit"`) {
					t.Errorf("429 without its code: %s", body)
				}
				mu.Lock()
				statuses[code]++
				mu.Unlock()
			}
		})
	}
	for i := range flood {
		next <- i
	}
	close(next)
	wg.Wait()
	if statuses[200] != store.NewSlugsPerClient || statuses[429] != flood-store.NewSlugsPerClient {
		t.Fatalf("flood answers %v, want %d × 200 and the rest 429", statuses, store.NewSlugsPerClient)
	}

	code, body := postView(t, reader, d.URL, "새-글")
	var v struct {
		Slug    string
		Views   uint64
		Counted bool
	}
	if err := json.Unmarshal(body, &v); code != 200 || err != nil || v.Slug != "새-글" || v.Views != 1 || !v.Counted {
		t.Fatalf("another reader's new post: %d %s", code, body)
	}

	r := hangartest.Do(t, http.MethodDelete, d.URL+"/api/admin/slugs/junk-0", nil, "Authorization", "Bearer "+hangartest.AdminToken)
	if r.Status != 200 {
		t.Fatalf("delete a junk slug: %d %s", r.Status, r.Body)
	}
	r = hangartest.Do(t, http.MethodGet, d.URL+"/api/admin/slugs?prefix=junk-", nil, "Authorization", "Bearer "+hangartest.AdminToken)
	var page struct {
		Slugs []store.SlugViews
		Count uint64
	}
	r.JSON(t, &page)
	if r.Status != 200 || page.Count != store.NewSlugsPerClient || len(page.Slugs) != store.NewSlugsPerClient-1 {
		t.Fatalf("slugs after the delete: %d %s", r.Status, r.Body)
	}
}

// The seed blog's totals, with Hangul and capitals, import on the first start and
// read back through their URLs.
func TestSeedViewsKoreanE2E(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "views.json")
	if err := os.WriteFile(seed, []byte(`{"한글-글": 17, "Hello-World": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, filepath.Join(dir, "data"), "HANGAR_SEED_VIEWS="+seed)
	r := hangartest.Do(t, http.MethodGet, d.URL+"/api/views?slugs="+url.QueryEscape("한글-글,Hello-World"), nil)
	if r.Status != 200 || string(r.Body) != `{"views":{"Hello-World":3,"한글-글":17}}` {
		t.Fatalf("seeded totals: %d %s", r.Status, r.Body)
	}
	if code, body := postView(t, http.DefaultClient, d.URL, "한글-글"); code != 200 || !strings.Contains(string(body), `"views":18`) {
		t.Fatalf("a view of a seeded Hangul slug: %d %s", code, body)
	}
}

// A seed file with invalid slugs stops the start and names each of them; nothing is
// recorded, so the corrected file seeds on the next start.
func TestSeedViewsInvalidSlugStopsStartE2E(t *testing.T) {
	dir := t.TempDir()
	data, seed := filepath.Join(dir, "data"), filepath.Join(dir, "views.json")
	if err := os.WriteFile(seed, []byte(`{"good": 1, "../etc/passwd": 2, "a\u202eb": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, hangarBin, "serve")
	cmd.Env = append(os.Environ(), "HANGAR_DATA_DIR="+data, "HANGAR_HTTP_ADDR="+freeAddr(t),
		"HANGAR_SSH_ADDR="+freeAddr(t), "HANGAR_SEED_VIEWS="+seed)
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("serve with a bad seed file: %v (context %v)\n%s", err, ctx.Err(), out)
	}
	for _, want := range []string{`"../etc/passwd"`, `"a\u202eb"`, "nothing was seeded"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not name %s:\n%s", want, out)
		}
	}
	if err := os.WriteFile(seed, []byte(`{"good": 1, "etc/passwd": 2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, data, "HANGAR_SEED_VIEWS="+seed)
	r := hangartest.Do(t, http.MethodGet, d.URL+"/api/views?slugs=good,etc/passwd", nil)
	if string(r.Body) != `{"views":{"etc/passwd":2,"good":1}}` {
		t.Fatalf("seeded after the fix: %s", r.Body)
	}
}
