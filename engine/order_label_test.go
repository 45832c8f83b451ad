package engine

import (
	"testing"
	"time"

	"github.com/hangarhq/hangar/store"
)

// An attempt skips the provider's find by label only when no earlier attempt of the
// order can have sent a create: its first start, with nothing before it in the stored
// history. Every other shape looks first (one server per order).
func TestMayHaveServer(t *testing.T) {
	now := time.Now()
	ev := func(names ...string) []store.OrderEvent {
		var h []store.OrderEvent
		for _, n := range names {
			h = append(h, store.OrderEvent{At: now, Event: n})
		}
		return h
	}
	long := ev("created")
	for len(long) < store.MaxHistory-1 {
		long = append(long, store.OrderEvent{At: now, Event: "renewed"})
	}
	long = append(long, store.OrderEvent{At: now, Event: "started"})
	tests := []struct {
		name string
		o    store.Order
		want bool
	}{
		{"first start", store.Order{Attempts: 1, History: ev("created", "started")}, false},
		{"first start after /provision", store.Order{Attempts: 1, History: ev("created", "enqueued", "started")}, false},
		{"a retry", store.Order{Attempts: 2, History: ev("created", "started", "retry_scheduled", "started")}, true},
		{"resumed after a crash", store.Order{Attempts: 1, History: ev("created", "started", "resumed")}, true},
		{"after a settle", store.Order{Attempts: 1, SettleUntil: now, History: ev("created", "started", "resumed", "settling", "started")}, true},
		{"requeued from the dead letters", store.Order{Attempts: 1, History: ev("created", "started", "dead_lettered", "requeued", "started")}, true},
		{"a history cut short", store.Order{Attempts: 1, History: long}, true},
		{"no history", store.Order{Attempts: 1}, true},
	}
	for _, tt := range tests {
		if got := mayHaveServer(tt.o); got != tt.want {
			t.Errorf("%s: mayHaveServer = %v, want %v", tt.name, got, tt.want)
		}
	}
}
