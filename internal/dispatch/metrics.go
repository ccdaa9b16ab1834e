package dispatch

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are dispatch's Prometheus series, registered on the Registerer
// the caller gives, never on the global default, so several dispatchers
// (tests, benchmarks) can live in one process.
type metrics struct {
	deliveries     *prometheus.CounterVec
	attemptSeconds *prometheus.HistogramVec
	lagSeconds     prometheus.Histogram
	autoDisabled   prometheus.Counter
	shed           prometheus.Counter
	breakersOpen   prometheus.GaugeFunc
	// latencySeconds is produce→delivered: from the event's time
	// attribute, which its producer stamps, to its successful delivery.
	latencySeconds prometheus.Histogram
	rateLimited    prometheus.Counter
	handedOver     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, openBreakers func() float64) (*metrics, error) {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_deliveries_total",
			Help: "Delivery attempts made, by sink type and outcome (succeeded, failed).",
		}, []string{"sink", "outcome"}),
		attemptSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "streaming_hub_delivery_attempt_seconds",
			Help:    "Duration of one delivery attempt, from the sink call to its outcome, by sink type.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 17), // 1ms … 65s, past the largest attempt_timeout
		}, []string{"sink"}),
		lagSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streaming_hub_delivery_lag_seconds",
			Help:    "Time from an event's arrival in the inbox to its successful delivery, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 25), // 5ms … about 23 days
		}),
		autoDisabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_autodisabled_total",
			Help: "Subscriptions this process switched off after a sustained, spread failure span (docs/concepts.md, Auto-disable).",
		}),
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_jobs_shed_total",
			Help: "Claimed jobs handed back without an attempt because their destination's breaker was open.",
		}),
		breakersOpen: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "streaming_hub_breakers_open",
			Help: "Circuit breakers of this process that are open or half-open.",
		}, openBreakers),
		latencySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streaming_hub_delivery_latency_seconds",
			Help:    "Produce to delivered: from an event's time attribute (stamped by its producer) to its successful delivery, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 25), // 5ms … about 23 days
		}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_jobs_rate_limited_total",
			Help: "Jobs this process's claims left pending for a later slot of their subscription's rate_limit, without an attempt.",
		}),
		handedOver: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_jobs_handed_over_total",
			Help: "Jobs whose first attempt this process's ingest leased straight to its dispatcher, without a claim.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.deliveries, m.attemptSeconds, m.lagSeconds, m.autoDisabled, m.shed, m.breakersOpen, m.latencySeconds, m.rateLimited, m.handedOver} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
