package ingest

import (
	"context"
	"log/slog"
	"time"

	"github.com/hubctl/hubctl/internal/backoff"
)

const (
	retryMinDelay = 100 * time.Millisecond
	retryMaxDelay = 5 * time.Second
	// attemptTimeout bounds one database or broker call, so a connection
	// that hangs instead of failing still ends in a retry.
	attemptTimeout = 30 * time.Second
)

// retryBackoff spaces the retries of a failing database or broker call.
var retryBackoff = backoff.Policy{Min: retryMinDelay, Max: retryMaxDelay}

// retry calls fn until it succeeds or ctx ends, backing off between
// attempts; it returns ctx's error in the latter case. Each attempt gets its
// own deadline. Failures are logged once when they start and once when they
// end, not at every attempt.
func (c *Consumer) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	tries := 0
	err := retryBackoff.Retry(ctx, func() error {
		tries++
		attemptCtx, cancel := context.WithTimeout(ctx, attemptTimeout)
		defer cancel()
		return fn(attemptCtx)
	}, func(err error, retry int, _ time.Duration) bool {
		if retry == 0 {
			c.log.Warn(what+" failed; retrying", slog.Any("error", err))
		}
		return false
	})
	if err == nil && tries > 1 {
		c.log.Info(what+" succeeded after retrying", slog.Int("attempts", tries))
	}
	return err
}
