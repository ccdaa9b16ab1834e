// Package backoff is the hub's one wait between retries of a failing
// dependency (the database, Kafka): jittered exponential, so processes that
// failed together do not retry together.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy doubles the wait from Min with each retry, up to Max.
type Policy struct {
	Min, Max time.Duration
}

// Delay is the wait before retry number retry (0 for the first): Min
// doubled retry times, capped at Max, with its upper half drawn by jitter
// in [0, 1).
func (p Policy) Delay(retry int, jitter float64) time.Duration {
	d := p.Max
	if retry < 32 && p.Min > 0 {
		d = min(p.Min<<retry, p.Max)
		if d <= 0 { // shifted past the range of a Duration
			d = p.Max
		}
	}
	half := d / 2
	return half + time.Duration(float64(half)*jitter)
}

// Sleep waits d or until ctx ends, reporting whether the full wait passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Retry calls try until it succeeds, stop says a failure is not worth
// another try after the coming wait, or ctx ends, waiting p.Delay (with
// jitter) between tries. stop sees each failure with its retry number (0
// after the first try) and the wait before the next; it is the place to
// log. Retry returns nil, try's last error when stop gave up, or ctx's
// error once ctx has ended.
func (p Policy) Retry(ctx context.Context, try func() error, stop func(err error, retry int, wait time.Duration) bool) error {
	for retry := 0; ; retry++ {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := p.Delay(retry, rand.Float64())
		if stop(err, retry, wait) {
			return err
		}
		if !Sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}
