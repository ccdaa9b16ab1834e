package maintenance

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/store/lifecycle"
)

// retentionPrune removes what retention no longer keeps (lifecycle.Prune:
// what goes and what stays is the store's decision), logs it and counts
// it.
//
// Leader: one instance at a time, under the retention lock that
// `hubctl storage prune` takes too: prunes at once would drop the same
// partitions.
func retentionPrune(o Options) (Service, error) {
	m := pruneMetrics{
		droppedRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_retention_dropped_rows_total",
			Help: "Rows retention removed, by table.",
		}, []string{"table"}),
		droppedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streaming_hub_retention_dropped_bytes_total",
			Help: "Bytes of the partitions retention dropped, by table.",
		}, []string{"table"}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "streaming_hub_retention_last_run_timestamp_seconds",
			Help: "Unix time this process last finished a retention run.",
		}),
	}
	if err := register(o.Registerer, m.droppedRows, m.droppedBytes, m.lastRun); err != nil {
		return Service{}, err
	}
	return Service{
		Name: "retention_prune", Interval: o.RetentionInterval, Leader: OneInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			started := time.Now()
			rep, err := o.Lifecycle.Prune(ctx, now, o.Retention, false)
			m.record(o, rep)
			if err != nil {
				return err
			}
			m.lastRun.Set(float64(o.now().UnixNano()) / 1e9)
			var rows, bytes int64
			for _, rm := range rep.Removals {
				rows, bytes = rows+rm.Rows, bytes+rm.Bytes
			}
			o.Logger.Info("retention run", "removed_rows", rows, "removed_bytes", bytes, "removals", len(rep.Removals),
				"kept", len(rep.Kept), "expired_cursors", rep.ExpiredCursors, "took", time.Since(started).Round(time.Millisecond))
			return nil
		},
	}, nil
}

type pruneMetrics struct {
	droppedRows, droppedBytes *prometheus.CounterVec
	lastRun                   prometheus.Gauge
}

// record logs and counts what a prune removed, also when it stopped half
// way: what was dropped is gone either way.
func (m pruneMetrics) record(o Options, rep lifecycle.PruneReport) {
	for _, rm := range rep.Removals {
		m.droppedRows.WithLabelValues(rm.Table).Add(float64(rm.Rows))
		m.droppedBytes.WithLabelValues(rm.Table).Add(float64(rm.Bytes))
		if rm.Whole {
			o.Logger.Info("retention dropped a partition", "table", rm.Table, "partition", rm.Partition,
				"rows", rm.Rows, "bytes", rm.Bytes)
		} else {
			o.Logger.Info("retention deleted expired rows of a catch-all partition", "table", rm.Table,
				"partition", rm.Partition, "rows", rm.Rows)
		}
	}
	for _, k := range rep.Kept {
		o.Logger.Info("retention kept an expired partition", "table", k.Table, "partition", k.Partition, "reason", k.Reason)
	}
}
