package maintenance

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// storageGauges refreshes the size and the oldest row of every table
// retention manages.
//
// Leader: every instance: each process serves them as its own metrics,
// whichever prunes.
func storageGauges(o Options) (Service, error) {
	bytes := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streaming_hub_storage_bytes",
		Help: "Size on disk of each table retention manages, every partition with its indexes.",
	}, []string{"table"})
	oldest := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "streaming_hub_storage_oldest_row_timestamp_seconds",
		Help: "Unix time of the oldest retained row of each table (absent while the table is empty).",
	}, []string{"table"})
	if err := register(o.Registerer, bytes, oldest); err != nil {
		return Service{}, err
	}
	return Service{
		Name: "storage_gauges", Interval: o.RetentionInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			st, err := o.Lifecycle.StorageStatus(ctx, now, o.Retention)
			if err != nil {
				return err
			}
			for _, t := range st.Tables {
				bytes.WithLabelValues(t.Table).Set(float64(t.Bytes))
				if t.Oldest == nil {
					oldest.DeleteLabelValues(t.Table)
					continue
				}
				oldest.WithLabelValues(t.Table).Set(float64(t.Oldest.UnixNano()) / 1e9)
			}
			return nil
		},
	}, nil
}
