package maintenance

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// strandedKeyRelease makes due the parked head of every ordering key whose
// release a transition missed (a race the claim cannot see, or a process
// of an older version; queue.ReleaseStrandedKeys), so a missed release
// delays a key by at most the interval, never strands it. It wakes the
// dispatcher when it released any.
//
// Leader: every delivering instance, like lease recovery, whose
// transitions it backs up; a second run at once finds nothing to release.
func strandedKeyRelease(o Options) (Service, error) {
	swept := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streaming_hub_ordering_keys_swept_total",
		Help: "Ordering keys whose parked next delivery this process's sweep released because nothing else had: each waited up to a reap interval longer than it needed to.",
	})
	if err := register(o.Registerer, swept); err != nil {
		return Service{}, err
	}
	return Service{
		Name: "stranded_key_release", Interval: o.ReapInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			released, err := o.Queue.ReleaseStrandedKeys(ctx, now)
			if err != nil || released == 0 {
				return err
			}
			swept.Add(float64(released))
			o.Logger.Info("released the parked heads of ordering keys nothing else had released", "keys", released)
			o.Dispatcher.Wake()
			return nil
		},
	}, nil
}
