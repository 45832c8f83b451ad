package http_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

// sizedBackups streams n bytes in chunks, as a store's backup does.
type sizedBackups struct{ n int }

func (b sizedBackups) Backup(_ context.Context, w io.Writer) (store.BackupInfo, error) {
	chunk := make([]byte, 256<<10)
	for sent := 0; sent < b.n; sent += len(chunk) {
		if _, err := w.Write(chunk[:min(len(chunk), b.n-sent)]); err != nil {
			return store.BackupInfo{}, err
		}
	}
	return store.BackupInfo{Bytes: int64(b.n)}, nil
}

// A backup larger than what the connection carries within the server's write timeout
// (30 s in serve, 1 s here) reaches a client that reads it steadily, whole. Before, the
// timeout was a deadline for the whole response: a store of some tens of MB fetched
// over a slow link by `hangar backup` was cut off after 30 s, every time.
func TestBackupReachesASlowSteadyReaderWhole(t *testing.T) {
	const size = 24 << 20 // at 4 MiB/s: 6 s, of which some 4 MiB may sit in socket buffers
	srv := hangarhttp.New(hangarhttp.Config{AdminToken: hangartest.AdminToken, Logger: slog.New(slog.DiscardHandler), WriteTimeout: time.Second},
		hangarhttp.Deps{Backups: sizedBackups{size}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(64 << 10)
	fmt.Fprintf(conn, "GET /admin/backup HTTP/1.1\r\nHost: hangar\r\nAuthorization: Bearer %s\r\n\r\n", hangartest.AdminToken)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 64<<10), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /admin/backup: %d", resp.StatusCode)
	}
	start := time.Now()
	var got int
	buf := make([]byte, 64<<10)
	for tick := time.NewTicker(15625 * time.Microsecond); ; <-tick.C {
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("the backup stream broke after %d of %d bytes, %v in: %v", got, size, time.Since(start).Round(time.Second), err)
			}
			break
		}
	}
	if got != size {
		t.Fatalf("read %d of %d bytes (%v): the stream was cut off", got, size, time.Since(start).Round(time.Second))
	}
}
