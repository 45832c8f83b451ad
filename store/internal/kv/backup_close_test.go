package kv

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"
)

// slowWriter is a backup client that reads slowly.
type slowWriter struct{ delay time.Duration }

func (w slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return len(p), nil
}

// Close stops a backup streaming from Badger before it closes Badger. It closed it
// under the backup's iterator, and `hangar serve` stopped with SIGTERM during a
// backup died of a fault in Badger's unmapped tables.
func TestCloseStopsAStreamingBackupFirst(t *testing.T) {
	s := quietOpen(t, t.TempDir())
	for i := range 40 {
		if err := s.Update(func(txn *Txn) error {
			for j := range 2000 {
				if err := txn.Set(fmt.Appendf(nil, "k%03d-%05d", i, j), make([]byte, 64)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Backup(context.Background(), slowWriter{delay: 50 * time.Millisecond})
		done <- err
	}()
	time.Sleep(150 * time.Millisecond) // the backup is reading Badger
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %s", took)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the backup went on to the end while the store closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the backup did not stop")
	}
	if _, err := s.Backup(context.Background(), io.Discard); err == nil {
		t.Error("a backup of a closed store started")
	}
}
