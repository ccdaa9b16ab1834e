package maintenance

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// leaseRecovery returns to pending the in-flight jobs whose lease expired
// without a result (their worker died or lost the database), and
// dead-letters as poison a job recovered too often
// (queue.RecoverExpiredLeases). It wakes the dispatcher when it recovered
// any.
//
// Leader: every delivering instance, so a recovery waits for no other
// process; concurrent runs skip each other's locked rows.
func leaseRecovery(o Options) (Service, error) {
	recovered := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "streaming_hub_leases_recovered_total",
		Help: "In-flight jobs whose lease expired without a result: retried, or dead-lettered as poison.",
	}, []string{"result"})
	if err := register(o.Registerer, recovered); err != nil {
		return Service{}, err
	}
	return Service{
		Name: "lease_recovery", Interval: o.ReapInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			rec, err := o.Queue.RecoverExpiredLeasesReported(ctx, now, o.PoisonThreshold, o.Dispatcher.ReportPoisoned)
			if err != nil {
				return err
			}
			if rec.Retried+rec.Poisoned == 0 {
				return nil
			}
			recovered.WithLabelValues("retry").Add(float64(rec.Retried))
			recovered.WithLabelValues("poison").Add(float64(rec.Poisoned))
			o.Logger.Warn("recovered jobs whose lease expired without a result", "retried", rec.Retried, "poison", rec.Poisoned)
			o.Dispatcher.Wake()
			return nil
		},
	}, nil
}
