package main

import (
	"crypto/subtle"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/anthdm/hollywood/actor"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	dir := flag.String("dir", "", "directory for the log and Badger (default: a new temp dir, removed at exit)")
	secret := flag.String("secret", "", "the bearer secret POST /orders requires (required)")
	withFiber := flag.Bool("fiber", false, "serve through a Fiber app instead of a bare fasthttp handler")
	withActors := flag.Bool("actors", false, "run each order in its own Hollywood actor, spawned by a dispatcher actor")
	withBadger := flag.Bool("badger", false, "write every record to Badger behind the log")
	flag.Parse()
	if *secret == "" {
		return fmt.Errorf("-secret is required")
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "hangar-floor-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dir = d
	}

	log, err := openGroupLog(*dir, *withBadger)
	if err != nil {
		return err
	}
	defer log.close()
	s := &server{log: log, secret: []byte("Bearer " + *secret)}
	s.provision = func(id int64, o order) { go s.complete(id, o) }
	if *withActors {
		e, err := actor.NewEngine(actor.NewEngineConfig())
		if err != nil {
			return err
		}
		dispatcher := e.Spawn(newDispatcher(s), "dispatcher")
		s.provision = func(id int64, o order) { e.Send(dispatcher, enqueue{id: id, o: o}) }
	}
	handler := s.handle
	if *withFiber {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Post("/orders", func(c *fiber.Ctx) error { s.createOrder(c.Context()); return nil })
		app.Get("/done", func(c *fiber.Ctx) error { s.done(c.Context()); return nil })
		handler = app.Handler()
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &fasthttp.Server{Handler: handler}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("listening %s\n", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	select {
	case <-sig:
		return srv.Shutdown()
	case err := <-served:
		return err
	}
}

// server answers POST /orders with the floor's work, and GET /done with how many
// orders are done and how many fdatasyncs the log has made, as "done syncs".
type server struct {
	log       *groupLog
	secret    []byte
	provision func(id int64, o order)
	nextID    atomic.Int64
	completed atomic.Int64
}

type order struct {
	UserID         int64  `json:"user_id"`
	TelegramUserID int64  `json:"telegram_user_id"`
	SpecID         string `json:"spec_id"`
	Region         string `json:"region"`
}

func (s *server) handle(c *fasthttp.RequestCtx) {
	switch string(c.Path()) {
	case "/orders":
		s.createOrder(c)
	case "/done":
		s.done(c)
	default:
		c.SetStatusCode(fasthttp.StatusNotFound)
	}
}

func (s *server) createOrder(c *fasthttp.RequestCtx) {
	if subtle.ConstantTimeCompare(c.Request.Header.Peek("Authorization"), s.secret) != 1 {
		c.SetStatusCode(fasthttp.StatusUnauthorized)
		return
	}
	var o order
	if err := json.Unmarshal(c.PostBody(), &o); err != nil || o.UserID == 0 || o.SpecID == "" {
		c.SetStatusCode(fasthttp.StatusBadRequest)
		return
	}
	id := s.nextID.Add(1)
	if err := s.log.append(record(id, "pending", o)); err != nil {
		c.SetStatusCode(fasthttp.StatusInternalServerError)
		return
	}
	s.provision(id, o)
	c.SetStatusCode(fasthttp.StatusCreated)
	c.SetContentType("application/json")
	body := strconv.AppendInt(append(c.Response.Body()[:0], `{"order_id":`...), id, 10)
	c.SetBody(append(body, `,"status":"pending"}`...))
}

// complete is the order's life after it was accepted: no provider work, its outcome
// made durable.
func (s *server) complete(id int64, o order) {
	if err := s.log.append(record(id, "active", o)); err != nil {
		fmt.Fprintln(os.Stderr, "floor: order", id, err)
		return
	}
	s.completed.Add(1)
}

func (s *server) done(c *fasthttp.RequestCtx) {
	if err := s.log.failed(); err != nil {
		c.SetStatusCode(fasthttp.StatusInternalServerError)
		c.SetBodyString(err.Error())
		return
	}
	b := strconv.AppendInt(nil, s.completed.Load(), 10)
	b = strconv.AppendInt(append(b, ' '), s.log.syncs.Load(), 10)
	c.SetBody(b)
}

// record is an order record about the size of hangar's.
func record(id int64, status string, o order) []byte {
	b := make([]byte, 0, 192)
	b = strconv.AppendInt(append(b, `{"id":`...), id, 10)
	b = append(append(append(b, `,"status":"`...), status...), `","user_id":`...)
	b = strconv.AppendInt(b, o.UserID, 10)
	b = strconv.AppendInt(append(b, `,"telegram_user_id":`...), o.TelegramUserID, 10)
	b = append(append(append(b, `,"spec_id":"`...), o.SpecID...), `","region":"`...)
	return append(append(b, o.Region...), `","price_paid":5000,"created_at":"2026-11-30T00:00:00Z"}`+"\n"...)
}
