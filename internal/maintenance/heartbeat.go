package maintenance

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/store/oncall"
)

// heartbeat stores this instance's metrics snapshot and open breakers
// (oncall.Heartbeat), so that `hubctl top` and `subs get` see every
// instance behind the database, and removes the instance when it stops.
//
// Leader: every instance: each stores its own.
func heartbeat(o Options) Service {
	var breakers func() []oncall.BreakerState
	if o.Dispatcher != nil {
		breakers = o.Dispatcher.Breakers
	}
	return Service{
		Name: "heartbeat", Interval: observe.HeartbeatInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			families, err := o.Gatherer.Gather()
			if err != nil {
				return err
			}
			stats, err := json.Marshal(observe.FromFamilies(families))
			if err != nil {
				return err
			}
			in := o.Instance
			in.HeartbeatAt, in.Stats = now, stats
			var open []oncall.BreakerState
			if breakers != nil {
				open = breakers()
			}
			return o.OnCall.Heartbeat(ctx, in, open, observe.StaleAfter)
		},
		Stop: func(ctx context.Context) { _ = o.OnCall.Leave(ctx, o.Instance.Owner) },
	}
}
