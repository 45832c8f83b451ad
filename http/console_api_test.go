package http_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/logring"
	"github.com/hangarhq/hangar/store"
	"github.com/hangarhq/hangar/tui/client"
)

const consoleToken = "console-admin-token-0123456789"

type consoleEnv struct {
	c     *client.Client
	store *store.Store
	log   *slog.Logger
}

// consoleStart serves the real Fiber app over a real socket on a real store, with the
// daemon's log teed into a ring as serve wires it, and returns the console's own
// client for it: the routes are tested as the console calls them.
func consoleStart(t *testing.T) consoleEnv {
	t.Helper()
	ring := logring.New(100)
	log := slog.New(logring.Tee(slog.NewTextHandler(io.Discard, nil), ring, logring.NewScrubber(consoleToken)))
	st, err := store.Open(store.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := hangarhttp.New(hangarhttp.Config{AdminToken: consoleToken, Logger: log},
		hangarhttp.Deps{Blog: st, Store: st, Balances: st, Users: st, Logs: ring})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		st.Close()
	})
	c, err := client.New("http://"+ln.Addr().String(), consoleToken)
	if err != nil {
		t.Fatal(err)
	}
	return consoleEnv{c: c, store: st, log: log}
}

func wantRefused(t *testing.T, err error, status int) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != status {
		t.Fatalf("err = %v, want a %d answer", err, status)
	}
}

func TestConsoleUserRoutes(t *testing.T) {
	e := consoleStart(t)
	ctx := t.Context()
	for _, u := range []int64{7, 8} {
		if _, err := e.store.Deposit(u, 20000); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []int64{7, 8, 7} {
		if _, err := e.store.CreateOrder(store.Order{UserID: u, TelegramUserID: u, SpecID: "nano-1", Region: "tokyo", PricePaid: 5000},
			store.OrderLimit{}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := e.c.Deposit(ctx, 7, 1500)
	if err != nil || b.UserID != 7 || b.Available != 20000-2*5000+1500 || b.Held != 10000 {
		t.Fatalf("deposit answered %+v, %v", b, err)
	}
	u, err := e.c.User(ctx, 7)
	if err != nil || u.Balance.Available != b.Available || len(u.Ledger) != 4 || u.Ledger[3].Kind != "deposit" || u.Ledger[3].Amount != 1500 {
		t.Fatalf("user = %+v, %v", u, err)
	}
	orders, err := e.c.UserOrders(ctx, 7, 10)
	if err != nil || len(orders) != 2 || orders[0].OrderID <= orders[1].OrderID || orders[0].UserID != 7 || orders[1].UserID != 7 {
		t.Fatalf("user 7's orders = %+v, %v: want both of theirs, newest first, none of user 8's", orders, err)
	}
	if one, err := e.c.UserOrders(ctx, 7, 1); err != nil || len(one) != 1 || one[0].OrderID != orders[0].OrderID {
		t.Fatalf("limit 1 = %+v, %v", one, err)
	}
	_, err = e.c.Deposit(ctx, 7, 0)
	wantRefused(t, err, 400)
}

func TestConsoleModerationRoutes(t *testing.T) {
	e := consoleStart(t)
	ctx := t.Context()
	var ids []uint64
	for _, text := range []string{"first", "second"} {
		c, err := e.store.AddComment(store.NewComment{Slug: "hello", Name: "n", Content: text, Password: "pw-123456", IP: "192.0.2.1"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	cs, err := e.c.Comments(ctx, 10)
	if err != nil || len(cs) != 2 || cs[0].Content != "second" {
		t.Fatalf("comments = %+v, %v: want newest first", cs, err)
	}
	if err := e.c.DeleteComment(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, e.c.DeleteComment(ctx, ids[0]), 404)
	if cs, _ = e.c.Comments(ctx, 10); len(cs) != 1 || cs[0].ID != ids[1] {
		t.Fatalf("after delete: %+v", cs)
	}

	q, err := e.store.AddInquiry(store.Inquiry{Name: "Tom", Email: "tom@example.org", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	read, err := e.c.MarkInquiryRead(ctx, q.ID)
	if err != nil || !read.Read || read.ID != q.ID {
		t.Fatalf("mark read = %+v, %v", read, err)
	}
	if qs, err := e.c.Inquiries(ctx, 10); err != nil || len(qs) != 1 || !qs[0].Read {
		t.Fatalf("inquiries = %+v, %v", qs, err)
	}
	_, err = e.c.MarkInquiryRead(ctx, q.ID+1)
	wantRefused(t, err, 404)
}

func TestConsoleVisitorsRoute(t *testing.T) {
	e := consoleStart(t)
	hits := []store.Hit{
		{Slug: "a", IP: "198.51.100.1", Country: "KR", City: "Seoul", Lat: 37.57, Lon: 126.98},
		{Slug: "b", IP: "198.51.100.2", Country: "JP", City: "Tokyo", Lat: 35.68, Lon: 139.69},
		{Slug: "c", IP: "198.51.100.3"},
	}
	for _, h := range hits {
		if _, err := e.store.RecordView(h); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := e.c.Visitors(t.Context(), 2)
	if err != nil || len(vs) != 2 {
		t.Fatalf("visitors = %+v, %v", vs, err)
	}
	if vs[1].Country != "JP" || vs[1].City != "Tokyo" || vs[1].Lat != 35.68 || vs[1].Lon != 139.69 {
		t.Fatalf("second newest = %+v, want Tokyo with its coordinates", vs[1])
	}
	all, err := e.c.Visitors(t.Context(), 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("all visitors = %d, %v", len(all), err)
	}
}

// TestConsoleLogsRoute: the daemon's log lines come back in order, after since, at a
// level, and never with a secret in them.
func TestConsoleLogsRoute(t *testing.T) {
	e := consoleStart(t)
	ctx := t.Context()
	e.log.Info("hangar serving", "http", "127.0.0.1:8080")
	e.log.Warn("upstream refused", "authorization", "Bearer "+consoleToken)
	e.log.Error("calling https://api/?key=" + consoleToken)
	all, err := e.c.Logs(ctx, 0, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, r := range all.Records {
		if strings.Contains(r.Msg+r.Attrs, consoleToken) {
			t.Fatalf("a log record holds the admin token: %+v", r)
		}
		msgs = append(msgs, r.Level+" "+strings.Fields(r.Msg)[0])
	}
	// The console's own requests are logged too, if at all, after these three.
	if len(msgs) < 3 || !slices.Equal(msgs[:3], []string{"INFO hangar", "WARN upstream", "ERROR calling"}) {
		t.Fatalf("records = %v", msgs)
	}
	warn, err := e.c.Logs(ctx, 0, "warn", 0)
	if err != nil || len(warn.Records) < 2 || warn.Records[0].Level != "WARN" {
		t.Fatalf("warn and above = %+v, %v", warn, err)
	}
	after, err := e.c.Logs(ctx, all.Records[1].Seq, "", 0)
	if err != nil || len(after.Records) == 0 || after.Records[0].Seq != all.Records[2].Seq {
		t.Fatalf("after #%d = %+v, %v", all.Records[1].Seq, after, err)
	}
	_, err = e.c.Logs(ctx, 0, "loud", 0)
	wantRefused(t, err, 400)
}
