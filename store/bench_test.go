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
