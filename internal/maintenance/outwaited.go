package maintenance

import (
	"context"
	"time"
)

// outwaitedRelease hands back the jobs queued in this process's dispatcher
// whose leases would no longer cover an attempt by its next run
// (Dispatcher.ReleaseOutwaited), before they expire into a recovery that
// counts towards poison.
//
// Leader: every delivering instance: the queue is the process's own.
func outwaitedRelease(o Options) Service {
	return Service{
		Name: "outwaited_release", Interval: o.ReapInterval, Leader: EveryInstance,
		RunOnce: func(ctx context.Context, now time.Time) error {
			o.Dispatcher.ReleaseOutwaited(ctx, now.Add(o.ReapInterval))
			return nil
		},
	}
}
