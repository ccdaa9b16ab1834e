package maintenance

import (
	"context"
	"time"
)

// cacheEvictionInterval spaces the cache evictions: entries go after ten
// minutes unused (dispatch's sinkIdleTimeout), so a minute late is nothing.
const cacheEvictionInterval = time.Minute

// cacheEviction closes the dispatcher's idle sinks and forgets its idle
// subscription rows (Dispatcher.EvictIdleCaches).
//
// Leader: every delivering instance: the caches are the process's own.
func cacheEviction(o Options) Service {
	return Service{
		Name: "cache_eviction", Interval: cacheEvictionInterval, Leader: EveryInstance,
		RunOnce: func(_ context.Context, now time.Time) error {
			o.Dispatcher.EvictIdleCaches(now)
			return nil
		},
	}
}
