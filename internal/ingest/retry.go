package ingest

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

const (
	retryMinDelay = 100 * time.Millisecond
	retryMaxDelay = 5 * time.Second
	// attemptTimeout bounds one database or broker call, so a connection
	// that hangs instead of failing still ends in a retry.
	attemptTimeout = 30 * time.Second
)

// backoffDelay is the wait before retry number attempt (0 for the first
// retry): doubling from retryMinDelay up to retryMaxDelay, the upper half
// randomised by jitter in [0, 1) so instances that failed together do not
// retry together.
func backoffDelay(attempt int, jitter float64) time.Duration {
	d := retryMaxDelay
	if attempt < 16 {
		d = min(retryMinDelay<<attempt, retryMaxDelay)
	}
	half := d / 2
	return half + time.Duration(float64(half)*jitter)
}

// sleep waits d or until ctx ends, reporting whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retry calls fn until it succeeds or ctx ends, backing off between
// attempts; it returns ctx's error in the latter case. Each attempt gets its
// own deadline. Failures are logged once when they start and once when they
// end, not at every attempt.
func (c *Consumer) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		attemptCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := fn(attemptCtx)
		cancel()
		if err == nil {
			if attempt > 0 {
				c.log.Info(what+" succeeded after retrying", slog.Int("attempts", attempt+1))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt == 0 {
			c.log.Warn(what+" failed; retrying", slog.Any("error", err))
		}
		if !sleep(ctx, backoffDelay(attempt, rand.Float64())) {
			return ctx.Err()
		}
	}
}
