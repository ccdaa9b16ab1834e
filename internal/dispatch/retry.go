package dispatch

import (
	"time"

	"github.com/hubctl/hubctl/internal/schedule"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// nextRetry decides what follows a failed attempt (docs/concepts.md, Retries): attemptsMade
// attempts have now been made, all failed. The next one waits a jittered
// step of the curve, lengthened to the destination's Retry-After when it
// gave one; a curve with no step left means dead, exhausted. rnd is as for
// schedule.Curve.Next.
func nextRetry(curve schedule.Curve, attemptsMade int, retryAfter time.Duration, now time.Time, rnd func() float64) queue.Retry {
	delay, exhausted := curve.Next(attemptsMade, rnd)
	if exhausted {
		return queue.Retry{Exhausted: true}
	}
	return queue.Retry{At: now.Add(schedule.ApplyRetryAfter(delay, retryAfter))}
}
