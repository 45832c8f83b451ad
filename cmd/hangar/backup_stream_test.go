package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/hangarhq/hangar/store"
)

// `hangar backup` keeps only a whole stream. The daemon answers 200 before it has
// read anything, so a failure after that (a log write failing under the snapshot, a
// stop) ends the stream early; the command renamed what it got into place and said
// "backup written". Now it checks the stream as restore would, keeps nothing and
// fails, on a file or on stdout.
func TestBackupKeepsOnlyAWholeStream(t *testing.T) {
	st, err := store.Open(store.Options{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := st.Deposit(int64(i+1), 100); err != nil {
			t.Fatal(err)
		}
	}
	var full bytes.Buffer
	if _, err := st.Backup(context.Background(), &full); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		name string
		body []byte
		ok   bool
	}{
		{"whole", full.Bytes(), true},
		{"cut off", full.Bytes()[:full.Len()/2], false},
		{"with bytes after the trailer", append(bytes.Clone(full.Bytes()), "junk"...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				w.Write(tc.body)
			}))
			defer srv.Close()
			file := filepath.Join(t.TempDir(), "snap.backup")
			err := runBackup([]string{"--addr", srv.URL, "--token", "0123456789abcdef", file})
			_, statErr := os.Stat(file)
			_, partialErr := os.Stat(file + ".partial")
			if tc.ok != (err == nil) || tc.ok != (statErr == nil) || partialErr == nil {
				t.Fatalf("backup: %v; file kept: %v; partial left: %v", err, statErr == nil, partialErr == nil)
			}
		})
	}
}
