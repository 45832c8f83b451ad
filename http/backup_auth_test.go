package http_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	hangarhttp "github.com/hangarhq/hangar/http"
	"github.com/hangarhq/hangar/internal/hangartest"
	"github.com/hangarhq/hangar/store"
)

type markerBackups struct{}

func (markerBackups) Backup(_ context.Context, w io.Writer) (store.BackupInfo, error) {
	_, err := io.WriteString(w, "every record of the store")
	return store.BackupInfo{}, err
}

// The backup is kept from viewers, and audited, under every path the router sends to
// it: Fiber matches without regard to case or a trailing slash, and a viewer
// downloaded the store from /admin/backup/ while nothing was audited.
func TestBackupIsOperatorsOnlyUnderEveryPath(t *testing.T) {
	st, err := store.Open(store.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := hangarhttp.New(hangarhttp.Config{AdminToken: hangartest.AdminToken, ViewerToken: hangartest.ViewerToken},
		hangarhttp.Deps{Store: st, Backups: markerBackups{}, Audit: st})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	url := "http://" + ln.Addr().String()
	paths := []string{"/admin/backup", "/admin/backup/", "/ADMIN/BACKUP", "/admin/Backup"}
	for _, p := range paths {
		if r := hangartest.Do(t, "GET", url+p, nil, "Authorization", "Bearer "+hangartest.ViewerToken); r.Status != 403 {
			t.Errorf("viewer GET %s: %d %q, want 403 read_only", p, r.Status, r.Body)
		}
	}
	if r := hangartest.Do(t, "GET", url+"/admin/backup/", nil, "Authorization", "Bearer "+hangartest.AdminToken); r.Status != 200 {
		t.Fatalf("operator GET /admin/backup/: %d", r.Status)
	}
	entries, err := st.AuditLog(100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(paths)+1 {
		t.Fatalf("%d audit entries, want %d (each refusal and the operator's backup)", len(entries), len(paths)+1)
	}
	for _, e := range entries {
		if e.Route != "/admin/backup" {
			t.Errorf("audit entry %+v: route %q, want /admin/backup", e, e.Route)
		}
	}
}
