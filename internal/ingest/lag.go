package ingest

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"
)

// DefaultLagInterval is how often the consumer lag of the owned partitions
// is measured.
const DefaultLagInterval = 10 * time.Second

// ownedPartitions is the set of partitions the group has assigned to this
// member, kept by the rebalance callbacks.
type ownedPartitions struct {
	mu    sync.Mutex
	parts map[string]map[int32]struct{}
}

func (o *ownedPartitions) add(assigned map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.parts == nil {
		o.parts = make(map[string]map[int32]struct{})
	}
	for topic, parts := range assigned {
		if o.parts[topic] == nil {
			o.parts[topic] = make(map[int32]struct{})
		}
		for _, p := range parts {
			o.parts[topic][p] = struct{}{}
		}
	}
}

func (o *ownedPartitions) remove(revoked map[string][]int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for topic, parts := range revoked {
		for _, p := range parts {
			delete(o.parts[topic], p)
		}
		if len(o.parts[topic]) == 0 {
			delete(o.parts, topic)
		}
	}
}

func (o *ownedPartitions) list() map[string][]int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string][]int32, len(o.parts))
	for topic, parts := range o.parts {
		for p := range parts {
			out[topic] = append(out[topic], p)
		}
	}
	return out
}

// partitionLag is the records of a partition not yet stored: from the
// database's next offset (what ingest has committed in its own
// transactions, the truth even while Kafka commits lag behind) to the
// partition's high watermark. A partition nothing was ever stored from lags
// by everything it retains.
func partitionLag(end, stored, logStart int64, hasStored bool) int64 {
	from := logStart
	if hasStored {
		from = stored
	}
	return max(end-from, 0)
}

// measureLag refreshes the lag gauge every interval until ctx ends. It asks
// the brokers and the database, so it measures a stalled ingest too: the
// lag of a consumer that stores nothing keeps growing with the log.
func (c *Consumer) measureLag(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		c.updateLag(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// updateLag measures the owned partitions once and drops the series of
// partitions no longer owned.
func (c *Consumer) updateLag(ctx context.Context) {
	owned := c.owned.list()
	c.dropLagSeries(owned)
	if len(owned) == 0 {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	ends, err := listOffsets(callCtx, c.client, owned, -1)
	if err == nil {
		var starts map[string]map[int32]int64
		if starts, err = listOffsets(callCtx, c.client, owned, -2); err == nil {
			var stored map[string]map[int32]queue.StoredOffset
			if stored, err = c.opts.Queue.LoadOffsets(callCtx, c.opts.Kafka.Group, owned); err == nil {
				for topic, parts := range owned {
					for _, p := range parts {
						end, ok := ends[topic][p]
						if !ok {
							continue
						}
						pos, hasStored := stored[topic][p]
						c.metrics.lag.WithLabelValues(topic, strconv.Itoa(int(p))).
							Set(float64(partitionLag(end, pos.Next, starts[topic][p], hasStored)))
					}
				}
				return
			}
		}
	}
	if ctx.Err() == nil {
		c.log.Debug("measuring consumer lag failed; the gauge keeps its last value", slog.Any("error", err))
	}
}

// dropLagSeries deletes the lag of partitions this member no longer owns:
// their new owner reports them.
func (c *Consumer) dropLagSeries(owned map[string][]int32) {
	c.lagMu.Lock()
	defer c.lagMu.Unlock()
	now := make(map[[2]string]bool)
	for topic, parts := range owned {
		for _, p := range parts {
			now[[2]string{topic, strconv.Itoa(int(p))}] = true
		}
	}
	for series := range c.lagSeries {
		if !now[series] {
			c.metrics.lag.DeleteLabelValues(series[0], series[1])
			delete(c.lagSeries, series)
		}
	}
	for series := range now {
		c.lagSeries[series] = true
	}
}
