// Package retention runs the storage lifecycle inside `hubctl serve`: on
// every interval one process (whichever holds the retention lock) creates
// the partitions ahead and drops the expired ones, and every process
// refreshes the storage gauges. What is kept and why is the store's
// decision (store.Prune); this package schedules it, logs it and counts it.
package retention

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/store"
)

// Options configure a Runner.
type Options struct {
	Store    *store.Store
	Policy   store.RetentionPolicy
	Interval time.Duration
	Logger   *slog.Logger
	// Registerer receives the storage metrics; nil registers none.
	Registerer prometheus.Registerer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Runner is the retention loop of one process.
type Runner struct {
	opts Options
	m    *metrics
}

// New builds a Runner and registers its metrics.
func New(opts Options) (*Runner, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m := newMetrics()
	if opts.Registerer != nil {
		if err := m.register(opts.Registerer); err != nil {
			return nil, err
		}
	}
	return &Runner{opts: opts, m: m}, nil
}

// Run runs retention at once and then every interval until ctx ends. A
// failed run is logged and tried again at the next tick: retention falling
// behind never stops the hub.
func (r *Runner) Run(ctx context.Context) error {
	ticker := time.NewTicker(r.opts.Interval)
	defer ticker.Stop()
	for {
		r.RunOnce(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// RunOnce prunes when no other process is pruning, then refreshes the
// storage gauges. It reports whether this process pruned.
func (r *Runner) RunOnce(ctx context.Context) (pruned bool) {
	log := r.opts.Logger
	err := r.opts.Store.WithRetentionLock(ctx, func() error {
		started := r.opts.Now()
		rep, err := r.opts.Store.Prune(ctx, started, r.opts.Policy, false)
		r.record(rep)
		if err != nil {
			return err
		}
		pruned = true
		r.m.lastRun.Set(float64(r.opts.Now().UnixNano()) / 1e9)
		var rows, bytes int64
		for _, rm := range rep.Removals {
			rows, bytes = rows+rm.Rows, bytes+rm.Bytes
		}
		log.Info("retention run", "removed_rows", rows, "removed_bytes", bytes, "removals", len(rep.Removals),
			"kept", len(rep.Kept), "expired_cursors", rep.ExpiredCursors, "took", time.Since(started).Round(time.Millisecond))
		return nil
	})
	switch {
	case errors.Is(err, store.ErrRetentionBusy):
		log.Debug("retention skipped: another process is running it")
	case err != nil && ctx.Err() == nil:
		log.Error("retention run failed; trying again at the next interval", "err", err, "interval", r.opts.Interval)
	}
	r.refreshGauges(ctx)
	return pruned
}

// record logs and counts what a prune removed, also when it stopped half
// way: what was dropped is gone either way.
func (r *Runner) record(rep store.PruneReport) {
	for _, rm := range rep.Removals {
		r.m.droppedRows.WithLabelValues(rm.Table).Add(float64(rm.Rows))
		r.m.droppedBytes.WithLabelValues(rm.Table).Add(float64(rm.Bytes))
		if rm.Whole {
			r.opts.Logger.Info("retention dropped a partition", "table", rm.Table, "partition", rm.Partition,
				"rows", rm.Rows, "bytes", rm.Bytes)
		} else {
			r.opts.Logger.Info("retention deleted expired rows of a catch-all partition", "table", rm.Table,
				"partition", rm.Partition, "rows", rm.Rows)
		}
	}
	for _, k := range rep.Kept {
		r.opts.Logger.Info("retention kept an expired partition", "table", k.Table, "partition", k.Partition, "reason", k.Reason)
	}
}

func (r *Runner) refreshGauges(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	st, err := r.opts.Store.StorageStatus(ctx, r.opts.Now(), r.opts.Policy)
	if err != nil {
		if ctx.Err() == nil {
			r.opts.Logger.Warn("storage gauges not refreshed", "err", err)
		}
		return
	}
	for _, t := range st.Tables {
		r.m.bytes.WithLabelValues(t.Table).Set(float64(t.Bytes))
		if t.Oldest == nil {
			r.m.oldest.DeleteLabelValues(t.Table)
			continue
		}
		r.m.oldest.WithLabelValues(t.Table).Set(float64(t.Oldest.UnixNano()) / 1e9)
	}
}

type metrics struct {
	bytes, oldest             *prometheus.GaugeVec
	droppedRows, droppedBytes *prometheus.CounterVec
	lastRun                   prometheus.Gauge
}

func newMetrics() *metrics {
	return &metrics{
		bytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streaming_hub_storage_bytes",
			Help: "Size on disk of each table retention manages, every partition with its indexes.",
		}, []string{"table"}),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "streaming_hub_storage_oldest_row_timestamp_seconds",
			Help: "Unix time of the oldest retained row of each table (absent while the table is empty).",
		}, []string{"table"}),
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
}

func (m *metrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.bytes, m.oldest, m.droppedRows, m.droppedBytes, m.lastRun} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
