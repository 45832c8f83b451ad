package http

import (
	"bufio"
	"context"
	"fmt"
	"io"
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
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		start := time.Now()
		info, err := s.deps.Backups.Backup(context.Background(), w)
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
