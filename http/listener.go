package http

import (
	"encoding/json"
	"net"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/connlimit"
)

// tooManyConnections is written raw to a connection over --max-conns: Fiber never
// sees it, so the error handler cannot shape it.
var tooManyConnections = func() []byte {
	body, _ := json.Marshal(api.Error{Message: "the server has too many open connections; try again shortly", Code: "too_many_connections"})
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}()

// guard wraps the HTTP listener: accept errors back off instead of ending Serve (fasthttp
// treats EMFILE as permanent), and connections beyond MaxConns get a 503.
func (s *Server) guard(ln net.Listener) net.Listener {
	return connlimit.Wrap(ln, connlimit.Config{
		Name: "http", Max: s.cfg.MaxConns, Logger: s.cfg.Logger, Metrics: s.conns,
		Refuse: func(c net.Conn) { _, _ = c.Write(tooManyConnections) },
	})
}

// lingerOnClose asks the connection to let the client read the answer before closing:
// see connlimit.Conn.LingerOnClose.
func lingerOnClose(c *fiber.Ctx) {
	if lc, ok := c.Context().Conn().(interface{ LingerOnClose() }); ok {
		lc.LingerOnClose()
	}
}

// knownMethods are the methods Fiber routes; anything else (PROPFIND, BREW) would get
// Fiber's text/plain 400 before any handler or error handler runs.
var knownMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range fiber.DefaultMethods {
		m[k] = true
	}
	return m
}()

// refuseUnknownMethods answers methods Fiber does not route with a JSON 501.
func refuseUnknownMethods(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	body, _ := json.Marshal(api.Error{Message: errUnknownMethod.message, Code: errUnknownMethod.code})
	return func(ctx *fasthttp.RequestCtx) {
		if knownMethods[string(ctx.Method())] {
			next(ctx)
			return
		}
		ctx.Response.Header.Set(fiber.HeaderAllow, "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH")
		ctx.SetStatusCode(errUnknownMethod.status)
		ctx.SetContentType(fiber.MIMEApplicationJSON)
		ctx.SetBody(body)
	}
}
