package maintenance

import (
	"context"
	"time"
)

// partitionCreation creates the daily partitions of today and the days
// ahead that are missing (lifecycle.CreatePartitions), so no write ever waits
// for one.
//
// Leader: one instance at a time: two runs would create the same
// partition and one would fail.
func partitionCreation(o Options) Service {
	return Service{
		Name: "partition_creation", Interval: o.RetentionInterval, Leader: OneInstance,
		RunOnce: o.Lifecycle.CreatePartitions,
	}
}

// inboxSequenceMove moves the inbox's sequence into the current day's
// range once the day has begun (lifecycle.MoveInboxSequence); it runs after
// partition creation, which makes the day's partition.
//
// Leader: one instance at a time: each run holds the ingest lock
// exclusively, pausing every batch, and one run is enough.
func inboxSequenceMove(o Options) Service {
	return Service{
		Name: "inbox_sequence_move", Interval: o.RetentionInterval, Leader: OneInstance,
		RunOnce: func(ctx context.Context, now time.Time) error { return o.Lifecycle.MoveInboxSequence(ctx, now) },
	}
}
