package http_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hangarhq/hangar/store"
)

type commentPage struct {
	Comments []struct {
		ID      uint64 `json:"id"`
		Content string `json:"content"`
	} `json:"comments"`
	Next uint64 `json:"next"`
}

// A slug's comments were answered in one page of up to 1000, oldest first, with no
// way to read further: past 1000 comments the newest were never shown, and a post
// given a few hundred comments of 2,000 characters answered every reader tens of
// megabytes (built in memory, per request). Now a page stops at a bound in bytes or
// at ?limit=, says where the next starts (next, for ?after=), and the pages together
// hold every comment once, in order.
func TestBlogCommentsArePaged(t *testing.T) {
	env := blogStart(t, blogAdminToken)
	const n = 60
	big := strings.Repeat("글", 2000) // 6,000 bytes
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := env.store.AddComment(store.NewComment{Slug: "busy", Name: "n", Content: fmt.Sprintf("%d %s", i, big), Password: "pppp", IP: "192.0.2.1"})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	read := func(query string) (commentPage, int) {
		t.Helper()
		r := env.do(t, http.MethodGet, "/api/comments/busy"+query, nil)
		wantStatus(t, r, 200, "")
		var p commentPage
		r.JSON(t, &p)
		return p, len(r.Body)
	}
	var ids []uint64
	pages, query := 0, ""
	for {
		p, size := read(query)
		pages++
		if size > 512<<10 {
			t.Fatalf("page %d is %d bytes", pages, size)
		}
		if len(p.Comments) == 0 {
			t.Fatalf("page %d is empty: %+v", pages, p)
		}
		for _, c := range p.Comments {
			ids = append(ids, c.ID)
		}
		if p.Next == 0 {
			break
		}
		if p.Next != p.Comments[len(p.Comments)-1].ID {
			t.Fatalf("next = %d, the page ends at %d", p.Next, p.Comments[len(p.Comments)-1].ID)
		}
		query = fmt.Sprintf("?after=%d", p.Next)
		if pages > n {
			t.Fatal("the pages do not end")
		}
	}
	if pages < 2 || len(ids) != n {
		t.Fatalf("%d comments in %d pages, want %d in several", len(ids), pages, n)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ids out of order or repeated: %v", ids)
		}
	}

	p, _ := read("?limit=2")
	if len(p.Comments) != 2 || p.Next != p.Comments[1].ID {
		t.Fatalf("limit=2: %+v", p)
	}
	p, _ = read(fmt.Sprintf("?after=%d&limit=1000", ids[len(ids)-1]))
	if len(p.Comments) != 0 || p.Next != 0 {
		t.Fatalf("after the last: %+v", p)
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?limit=x", "?after=-1", "?after=x"} {
		r := env.do(t, http.MethodGet, "/api/comments/busy"+q, nil)
		if r.Status != 400 {
			t.Fatalf("%s: status %d: %s", q, r.Status, r.Body)
		}
	}
}
