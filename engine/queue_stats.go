package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hangarhq/hangar/store"
)

// Alarms are the thresholds an operator is warned at (seed 002's monitoring section).
type Alarms struct {
	Depth       int           // queue depth above this alarms (default 500)
	DeadLetters int           // dead letters above this alarms (default 10)
	Lag         time.Duration // oldest waiting order older than this alarms (default 10 min)
}

func (a *Alarms) setDefaults() {
	if a.Depth <= 0 {
		a.Depth = 500
	}
	if a.DeadLetters <= 0 {
		a.DeadLetters = 10
	}
	if a.Lag <= 0 {
		a.Lag = 10 * time.Minute
	}
}

// QueueStats is the queue at one moment (GET /admin/queue and the feed's snapshots).
type QueueStats struct {
	At             time.Time       `json:"at"`
	Depth          int             `json:"depth"`
	Pending        int             `json:"pending"`
	WaitingRetry   int             `json:"waiting_retry"`
	InFlight       int             `json:"in_flight"`
	MaxConcurrency int             `json:"max_concurrency"`
	Enqueued       uint64          `json:"enqueued"`
	Started        uint64          `json:"started"`
	Retried        uint64          `json:"retried"`
	Succeeded      uint64          `json:"succeeded"`
	DeadLettered   uint64          `json:"dead_lettered"`
	DeadLetters    int             `json:"dead_letters"`
	LagSeconds     float64         `json:"lag_seconds"`
	Alarms         AlarmStates     `json:"alarms"`
	Thresholds     AlarmThresholds `json:"thresholds"`
	Disk           *DiskState      `json:"disk,omitempty"`
	// Paused is set while an operator has paused provisioning: orders are accepted
	// and wait, and no attempt starts, since PausedSince.
	Paused      bool       `json:"paused"`
	PausedSince *time.Time `json:"paused_since,omitempty"`
	// Telegram is getWebhookInfo's last answer, when hangar asks it (webhook mode).
	Telegram *WebhookState `json:"telegram,omitempty"`
}

// DiskState is the disk under the store, from a store that reports it.
type DiskState struct {
	FreeBytes  int64  `json:"free_bytes"`
	FloorBytes int64  `json:"floor_bytes"`
	Refusing   string `json:"refusing,omitempty"`
}

// diskReporter is a store that knows its disk (store.Store).
type diskReporter interface {
	Storage() store.Storage
}

// AlarmStates says which alarms are raised.
type AlarmStates struct {
	Depth       bool `json:"depth"`
	DeadLetters bool `json:"dead_letters"`
	Lag         bool `json:"lag"`
	// Disk is raised while the store refuses writes (a full disk, a failing log).
	Disk bool `json:"disk"`
	// Telegram is raised for WebhookErrorRecent after Telegram reports a delivery error.
	Telegram bool `json:"telegram"`
}

// AlarmThresholds is Alarms as JSON.
type AlarmThresholds struct {
	Depth       int     `json:"depth"`
	DeadLetters int     `json:"dead_letters"`
	LagSeconds  float64 `json:"lag_seconds"`
}

// queueMetrics are the Prometheus series an operator watches.
type queueMetrics struct {
	enqueued, started, retried, succeeded, deadLettered prometheus.Counter
	depth, inFlight, deadLetters, lag, paused           prometheus.Gauge
	alarm                                               *prometheus.GaugeVec
	provisionTime                                       prometheus.Histogram
}

func newQueueMetrics(reg prometheus.Registerer) *queueMetrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "hangar_queue_" + name + "_total", Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "hangar_queue_" + name, Help: help})
	}
	m := &queueMetrics{
		enqueued:     counter("enqueued", "Orders put on the queue (sent)."),
		started:      counter("started", "Provisioning attempts started (received)."),
		retried:      counter("retried", "Attempts that failed and were scheduled for a retry."),
		succeeded:    counter("succeeded", "Orders that became active."),
		deadLettered: counter("dead_lettered", "Orders moved to the dead-letter queue."),
		depth:        gauge("depth", "Orders waiting: pending plus waiting for a retry."),
		inFlight:     gauge("in_flight", "Orders being provisioned now."),
		deadLetters:  gauge("dead_letters", "Orders in the dead-letter list."),
		lag:          gauge("lag_seconds", "Age of the oldest runnable order that has not started (consumer lag)."),
		paused:       gauge("paused", "1 while an operator has paused provisioning: orders wait and no attempt starts."),
		alarm: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hangar_queue_alarm", Help: "1 when an alarm (depth, dead_letters, lag, disk, telegram) is raised.",
		}, []string{"alarm"}),
		provisionTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "hangar_provision_seconds", Help: "Time one provisioning attempt took, successful or not.",
			Buckets: []float64{0.001, 0.01, 0.1, 0.5, 1, 2, 5, 10, 15, 20, 30, 45, 60, 120},
		}),
	}
	if reg != nil {
		reg.MustRegister(m.enqueued, m.started, m.retried, m.succeeded, m.deadLettered,
			m.depth, m.inFlight, m.deadLetters, m.lag, m.paused, m.alarm, m.provisionTime)
	}
	return m
}

func (m *queueMetrics) observe(s QueueStats) {
	m.depth.Set(float64(s.Depth))
	m.inFlight.Set(float64(s.InFlight))
	m.deadLetters.Set(float64(s.DeadLetters))
	m.lag.Set(s.LagSeconds)
	if s.Paused {
		m.paused.Set(1)
	} else {
		m.paused.Set(0)
	}
	set := func(name string, on bool) {
		v := 0.0
		if on {
			v = 1
		}
		m.alarm.WithLabelValues(name).Set(v)
	}
	set("depth", s.Alarms.Depth)
	set("dead_letters", s.Alarms.DeadLetters)
	set("lag", s.Alarms.Lag)
	set("disk", s.Alarms.Disk)
	set("telegram", s.Alarms.Telegram)
}
