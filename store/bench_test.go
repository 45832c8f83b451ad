package store

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// Store-level throughput, without HTTP: `go test -bench . ./store` or `make bench`.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(Options{Dir: b.TempDir(), SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkRecordView(b *testing.B) {
	s := benchStore(b)
	var n atomic.Uint64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			_, err := s.RecordView(Hit{Slug: fmt.Sprintf("post-%d", rand.IntN(1000)), IP: fmt.Sprintf("10.%d.%d.%d", i%100, (i/100)%100, i%250)})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "views/s")
}

func BenchmarkCreateOrder(b *testing.B) {
	s := benchStore(b)
	for u := int64(1); u <= 1000; u++ {
		if _, err := s.Deposit(u, 1<<40); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			u := n.Add(1)%1000 + 1
			_, err := s.CreateOrder(Order{UserID: u, TelegramUserID: u, Provider: "sim", SpecID: "sim-nano", Region: "tokyo", PricePaid: 5000}, OrderLimit{Max: 1 << 30, Window: time.Hour})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
}

// BenchmarkOpenWith100kUsers is a restart's cost with 100,000 Telegram users stored
// (a user record and a live window each): Open scans them into the filters that spare
// later lookups (knownusers.go, usersets.go), so its time grows with the users.
func BenchmarkOpenWith100kUsers(b *testing.B) {
	const users = 100_000
	dir := b.TempDir()
	s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for first := int64(1); first <= users; first += 2000 {
		if err := s.update(func(txn *tx) error {
			for u := first; u < first+2000; u++ {
				if err := s.markUserSeen(txn, u, now); err != nil {
					return err
				}
				if err := s.putWindow(txn, u, Window{Count: 1, ResetAt: now.Add(time.Hour)}, now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(Options{Dir: dir, SyncWrites: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
}
