package http

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/http/api"
	"github.com/hangarhq/hangar/internal/logring"
)

// Logs is the daemon's recent log, already scrubbed of secrets (internal/logring).
type Logs interface {
	Since(since uint64, min slog.Level, limit int) (recs []logring.Record, last uint64, gap bool)
}

var _ Logs = (*logring.Ring)(nil)

// logs answers the daemon's own log records after since, at level or above, oldest
// first (GET /admin/logs?since=&level=&limit=), for the console's log pane.
func (s *Server) logs(c *fiber.Ctx) error {
	var since uint64
	if raw := c.Query("since"); raw != "" {
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return badRequest("bad_since", "since must be the last sequence number seen (a whole number)")
		}
		since = n
	}
	min := slog.LevelDebug
	if raw := c.Query("level"); raw != "" {
		if err := min.UnmarshalText([]byte(strings.ToUpper(raw))); err != nil {
			return badRequest("bad_level", "level must be debug, info, warn or error")
		}
	}
	limit, err := queryLimit(c, 500, 2000)
	if err != nil {
		return err
	}
	recs, last, gap := s.deps.Logs.Since(since, min, limit)
	out := api.LogPage{Records: make([]api.LogRecord, 0, len(recs)), Last: last, Gap: gap}
	for _, r := range recs {
		out.Records = append(out.Records, api.LogRecord{Seq: r.Seq, Time: r.Time.UTC(), Level: r.Level.String(), Msg: r.Msg, Attrs: r.Attrs})
	}
	return c.JSON(out)
}
