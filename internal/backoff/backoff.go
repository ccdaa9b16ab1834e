// Package backoff is the hub's one wait between retries of a failing
// dependency (the database, Kafka): jittered exponential, so processes that
// failed together do not retry together.
package backoff

import (
	"context"
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
