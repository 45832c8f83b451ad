package engine

import "github.com/prometheus/client_golang/prometheus"

// metrics are the engine's Prometheus collectors. They are created once per Engine and
// registered on the registry the caller provides, so tests can run engines side by side.
type metrics struct {
	updatesAccepted   prometheus.Counter
	updatesDuplicate  prometheus.Counter
	updatesProcessed  prometheus.Counter
	updatesRecovered  prometheus.Counter
	updatesRefused    prometheus.Counter
	rateLimited       prometheus.Counter
	rateLimitStoreErr prometheus.Counter
	userActors        prometheus.Gauge
	processLatency    prometheus.Histogram
	messages          *prometheus.CounterVec
	panics            *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		updatesAccepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_updates_accepted_total", Help: "Telegram updates accepted: webhook updates processed and durable, polled updates and payments kept for retry durable in the inbox.",
		}),
		updatesDuplicate: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_updates_duplicate_total", Help: "Telegram re-deliveries of an update_id seen in the last 24h, acknowledged and ignored.",
		}),
		updatesProcessed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_updates_processed_total", Help: "Updates processed by the per-user actors.",
		}),
		updatesRecovered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_updates_recovered_total", Help: "Acknowledged updates found unprocessed in the inbox at start and re-delivered.",
		}),
		updatesRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_updates_refused_busy_total", Help: "Updates answered 503 because too many were waiting for their actors.",
		}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_ratelimited_total", Help: "Messages refused because the user's window was full.",
		}),
		rateLimitStoreErr: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_ratelimit_store_errors_total", Help: "Store errors in the rate limiter; the message passed (availability first).",
		}),
		userActors: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hangar_user_actors", Help: "Live per-user rate-limit actors.",
		}),
		processLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "hangar_update_process_seconds", Help: "Time from acknowledging an update to committing its outcome.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_telegram_messages_total", Help: "Outgoing Telegram messages by outcome.",
		}, []string{"outcome"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hangar_actor_panics_total", Help: "Panics recovered inside actors, by actor kind.",
		}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.updatesAccepted, m.updatesDuplicate, m.updatesProcessed, m.updatesRecovered, m.updatesRefused,
			m.rateLimited, m.rateLimitStoreErr, m.userActors, m.processLatency, m.messages, m.panics)
	}
	return m
}

// reconcileMetrics describe the last reconciliation of servers against orders.
type reconcileMetrics struct {
	duplicates prometheus.Gauge
	orphans    prometheus.Gauge
	servers    prometheus.Gauge
	lastRun    prometheus.Gauge
	deleted    prometheus.Counter
	errors     prometheus.Counter
}

func newReconcileMetrics(reg prometheus.Registerer) *reconcileMetrics {
	m := &reconcileMetrics{
		duplicates: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hangar_reconcile_duplicates", Help: "Servers found at the last reconcile that duplicate another of the same order and are still there.",
		}),
		orphans: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hangar_reconcile_orphans", Help: "Servers found at the last reconcile whose order is missing, failed, cancelled or terminated, and still there.",
		}),
		servers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hangar_reconcile_servers", Help: "hangar-order-* servers the providers listed at the last reconcile.",
		}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hangar_reconcile_last_run_timestamp_seconds", Help: "When the last reconcile ran (Unix time).",
		}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_reconcile_deleted_total", Help: "Duplicate or orphaned servers the reconciler deleted.",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hangar_reconcile_errors_total", Help: "Provider or store errors during reconciles.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.duplicates, m.orphans, m.servers, m.lastRun, m.deleted, m.errors)
	}
	return m
}
