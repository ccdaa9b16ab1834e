package ingest

import (
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/store/queue"
)

// metrics are ingest's Prometheus series. They are registered on the
// Registerer the caller gives, never on the global default, so several
// consumers (tests, benchmarks) can live in one process.
type metrics struct {
	records        *prometheus.CounterVec
	batchSeconds   prometheus.Histogram
	batchRecords   prometheus.Histogram
	skipped        prometheus.Counter
	matched        *prometheus.CounterVec
	storeRetries   prometheus.Counter
	abandoned      prometheus.Counter
	commitFailures prometheus.Counter
	filterErrors   *prometheus.CounterVec
	lag            *prometheus.GaugeVec
	batchesStored  prometheus.Counter
	lastStored     prometheus.Gauge
	repositioned   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_records_total",
			Help: "Kafka records ingested, by verdict (accept, discard, quarantine) and reason code (empty for accept).",
		}, []string{"verdict", "reason"}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streaming_hub_ingest_batch_seconds",
			Help:    "Time to store one partition batch in the database, from its first attempt to its commit, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15), // 1ms … 16s
		}),
		batchRecords: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "streaming_hub_ingest_batch_records",
			Help:    "Records in one partition batch.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 9), // 1 … 65536
		}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_replayed_records_total",
			Help: "Records read again that an earlier writer had already stored (lost Kafka commit, rebalance); skipped by the stored offset.",
		}),
		matched: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_matched_total",
			Help: "Delivery work created by matching: delivery jobs (push) and pull stream entries (pull).",
		}, []string{"sink"}),
		storeRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_store_retries_total",
			Help: "Failed attempts to store a partition batch, each followed by a retry of the same batch.",
		}),
		abandoned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_batches_abandoned_total",
			Help: "Partition batches given up unstored, at shutdown or for a rebalance; their records are read again.",
		}),
		commitFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_kafka_commit_failures_total",
			Help: "Kafka offset commits that failed after the batch was stored; the stored offset still protects a restart.",
		}),
		filterErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_filter_errors_total",
			Help: "Content filters that failed on an event, by tenant, subscription and reason (invalid, eval_error, cost_limit, timeout, budget_exceeded); a push subscription's event became a filter_error dead letter.",
		}, []string{"tenant", "subscription_id", "reason"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streaming_hub_kafka_consumer_lag_records",
			Help: "Records of a partition owned by this process not yet stored: the high watermark minus the stored next offset.",
		}, []string{"topic", "partition"}),
		batchesStored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_batches_total",
			Help: "Partition batches stored (committed to the database).",
		}),
		lastStored: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streaming_hub_ingest_last_batch_timestamp_seconds",
			Help: "Unix time of the last partition batch this process stored; with lag above zero, a stalled ingest.",
		}),
		repositioned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_ingest_partitions_repositioned_total",
			Help: "Partitions whose stored position was moved because it could not belong to the log as it is: reason recreated (the topic was deleted and created again) or truncated (the broker lost the log's tail).",
		}, []string{"reason"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.records, m.batchSeconds, m.batchRecords, m.skipped, m.matched, m.storeRetries, m.abandoned, m.commitFailures, m.filterErrors, m.lag, m.batchesStored, m.lastStored, m.repositioned} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe counts what one stored batch did.
func (m *metrics) observe(res queue.IngestResult) {
	for _, c := range res.Counts() {
		m.records.WithLabelValues(string(c.Kind), string(c.Reason)).Add(float64(c.Count))
	}
	if res.Skipped > 0 {
		m.skipped.Add(float64(res.Skipped))
	}
	if res.Jobs > 0 {
		m.matched.WithLabelValues("push").Add(float64(res.Jobs))
	}
	if res.PullEntries > 0 {
		m.matched.WithLabelValues("pull").Add(float64(res.PullEntries))
	}
	for _, f := range res.FilterFailures {
		m.filterErrors.WithLabelValues(f.TenantID, uuid.UUID(f.SubscriptionID).String(), f.Reason).Inc()
	}
}
