package http

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hangarhq/hangar/store"
)

// Backups takes consistent snapshots of the store (store.Store.Backup).
type Backups interface {
	Backup(ctx context.Context, w io.Writer) (store.BackupInfo, error)
}

// backup answers GET /admin/backup with a snapshot of the store, streamed as it is
// read, while the daemon keeps serving. A failure once streaming has begun can no
// longer change the status: the stream then ends without its trailer, which restore
// refuses.
func (s *Server) backup(c *fiber.Ctx) error {
	name := fmt.Sprintf("hangar-%s.backup", time.Now().UTC().Format("20060102-150405"))
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	log := s.cfg.Logger
	// The server's write timeout is a deadline for the whole response, set before the
	// stream begins: a backup that takes longer to carry than that was cut off. Here it
	// is a stall limit instead: each write the client's reading makes room for moves the
	// deadline on, so a slow but steady client gets the whole file, and one that stops
	// reading is cut off (and the backup's hold on the store released) a stall later.
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		start := time.Now()
		info, err := s.deps.Backups.Backup(context.Background(), &stallDeadline{w: w, conn: conn, stall: s.cfg.writeTimeout()})
		if err != nil {
			log.Error("backup failed while streaming; the client gets a file restore refuses", "err", err)
			return
		}
		if err := w.Flush(); err != nil {
			log.Warn("backup: the client went away", "err", err)
			return
		}
		log.Info("backup streamed", "keys", info.Keys, "took", time.Since(start).Round(time.Millisecond))
	})
	return nil
}

// stallDeadline moves conn's write deadline stall past each write.
type stallDeadline struct {
	w     io.Writer
	conn  net.Conn
	stall time.Duration
}

// Write hands p on in pieces of at most stallPiece bytes, moving the deadline before
// each: the stream's pipe holds a few writes, so after the last one the client has
// a stall's time to take only that little.
func (s *stallDeadline) Write(p []byte) (int, error) {
	var n int
	for len(p) > 0 {
		piece := p[:min(len(p), stallPiece)]
		if s.conn != nil {
			_ = s.conn.SetWriteDeadline(time.Now().Add(s.stall))
		}
		m, err := s.w.Write(piece)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

// stallPiece bounds one write into the response stream.
const stallPiece = 32 << 10
