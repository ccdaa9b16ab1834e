package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/schedule"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// queuedJob is a claimed job with the subscription row it is attempted
// under, waiting in the local queue for a worker.
type queuedJob struct {
	queue.ClaimedJob
	sub   *catalog.Subscription // shared and read-only
	curve schedule.Curve        // sub's retry curve
	// queuedAt is when the job joined the local queue.
	queuedAt time.Time
	// destination is the key of the job's destination cap, its breaker's,
	// set when it joins the queue: the queue reads it at every start.
	destination string
}

// subscriptionCache keeps the subscription rows of claimed jobs. A claim
// names each job's subscription and the version (updated_at) it found
// enabled; the row, secrets still sealed, is read only when the cache has
// no version at least that new: a whole subscription on every job row
// would be most of what a claim returns and most of what decoding it
// costs.
type subscriptionCache struct {
	read func(context.Context, []uuid.UUID) ([]catalog.Subscription, error)
	log  *slog.Logger

	mu      sync.Mutex
	entries map[uuid.UUID]*cachedSubscription
}

type cachedSubscription struct {
	sub      *catalog.Subscription
	curve    schedule.Curve
	lastUsed time.Time
}

func newSubscriptionCache(read func(context.Context, []uuid.UUID) ([]catalog.Subscription, error), log *slog.Logger) *subscriptionCache {
	return &subscriptionCache{read: read, log: log, entries: map[uuid.UUID]*cachedSubscription{}}
}

// resolve pairs each job with its subscription, reading in one query the
// rows the cache lacks or holds in an older version than the claim saw.
func (c *subscriptionCache) resolve(ctx context.Context, jobs []queue.ClaimedJob, now time.Time) ([]queuedJob, error) {
	queued := make([]queuedJob, len(jobs))
	var stale []uuid.UUID
	c.mu.Lock()
	for i, job := range jobs {
		queued[i].ClaimedJob = job
		if e := c.entries[job.SubscriptionID]; e != nil && !e.sub.UpdatedAt.Before(job.SubscriptionUpdatedAt) {
			e.lastUsed = now
			queued[i].sub, queued[i].curve = e.sub, e.curve
			continue
		}
		if !slices.Contains(stale, job.SubscriptionID) {
			stale = append(stale, job.SubscriptionID)
		}
	}
	c.mu.Unlock()
	if len(stale) == 0 {
		return queued, nil
	}

	rows, err := c.read(ctx, stale)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range rows {
		sub := &rows[i]
		// Two claims may read one subscription at once; the newer row wins.
		if e := c.entries[sub.ID]; e == nil || e.sub.UpdatedAt.Before(sub.UpdatedAt) {
			c.entries[sub.ID] = &cachedSubscription{sub: sub, curve: c.curve(sub), lastUsed: now}
		}
	}
	for i := range queued {
		if queued[i].sub != nil {
			continue
		}
		e := c.entries[queued[i].SubscriptionID]
		if e == nil {
			// Subscriptions are deleted softly, never removed: a job
			// without one is a broken database, not a race.
			return nil, fmt.Errorf("subscription %s of job %s has no row", queued[i].SubscriptionID, queued[i].ID)
		}
		e.lastUsed = now
		queued[i].sub, queued[i].curve = e.sub, e.curve
	}
	return queued, nil
}

// curve is the retry curve of a version of a subscription just read, the
// default when its stored override is malformed. Each version is read
// once while cached, so that is logged once per version.
func (c *subscriptionCache) curve(sub *catalog.Subscription) schedule.Curve {
	curve, ignored := schedule.ForSubscription(sub.RetrySchedule)
	if ignored != nil {
		c.log.Warn("malformed stored retry_schedule; using the default curve",
			"subscription_id", sub.ID, "tenant_id", sub.TenantID, "error", ignored)
	}
	return curve
}

// evictIdle forgets the subscriptions no claim named since before now - idle.
func (c *subscriptionCache) evictIdle(now time.Time, idle time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, e := range c.entries {
		if now.Sub(e.lastUsed) >= idle {
			delete(c.entries, id)
		}
	}
}
