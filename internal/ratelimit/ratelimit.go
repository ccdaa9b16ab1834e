// Package ratelimit is a set of token buckets, one per key (a tenant), on an
// injected clock. It holds no goroutine: buckets refill lazily when asked,
// and a bucket idle long enough to be full again is forgotten, since a
// forgotten bucket and a full one behave the same.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// maxWait bounds the wait a denial reports. It only matters for absurdly low
// rates (STREAMING_HUB_PULL_RATE accepts any positive number), where the exact
// figure would overflow a time.Duration and tell a client nothing useful.
const maxWait = time.Hour

// Limiter is a token bucket per key: Rate tokens a second, at most Burst in
// hand, one token per request. Safe for concurrent use.
type Limiter struct {
	rate  float64
	burst float64
	now   func() time.Time
	// idleAfter is how long a drained bucket takes to fill up again; a
	// bucket untouched for that long is full, so it can be dropped.
	idleAfter time.Duration

	mu        sync.Mutex
	buckets   map[string]bucket
	lastSweep time.Time
}

// bucket is one key's tokens as of the last time the key asked.
type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a limiter of rate tokens per second with room for burst. rate
// must be positive and burst at least 1 (the configuration checks both); now
// is the clock, time.Now outside tests.
func New(rate float64, burst int, now func() time.Time) *Limiter {
	burst = max(burst, 1)
	return &Limiter{
		rate:      rate,
		burst:     float64(burst),
		now:       now,
		idleAfter: secondsToDuration(float64(burst) / rate),
		buckets:   make(map[string]bucket),
	}
}

// Allow takes a token from key's bucket. When the bucket is empty it takes
// nothing and returns how long until a token will be there.
func (l *Limiter) Allow(key string) (allowed bool, wait time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, known := l.buckets[key]
	if !known {
		b = bucket{tokens: l.burst, at: now}
	}
	tokens := refill(b.tokens, now.Sub(b.at), l.rate, l.burst)
	allowed, tokens, wait = take(tokens, l.rate)
	l.buckets[key] = bucket{tokens: tokens, at: now}
	return allowed, wait
}

// sweep forgets the buckets that are full again. It walks the map at most
// once per refill period, so its cost spreads thinly over the requests in
// between, and the map holds only the keys active within about two periods.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.idleAfter {
		return
	}
	l.lastSweep = now
	for key, b := range l.buckets {
		if refill(b.tokens, now.Sub(b.at), l.rate, l.burst) >= l.burst {
			delete(l.buckets, key)
		}
	}
}

// Len is how many keys the limiter remembers.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// refill is the bucket's level after elapsed at rate, capped at burst. A
// clock that went backwards adds nothing rather than taking tokens away.
func refill(tokens float64, elapsed time.Duration, rate, burst float64) float64 {
	if elapsed <= 0 {
		return min(tokens, burst)
	}
	return min(tokens+elapsed.Seconds()*rate, burst)
}

// take spends one token when there is one. Otherwise the level is left as
// it is and wait is how long the missing fraction takes to refill.
func take(tokens, rate float64) (allowed bool, left float64, wait time.Duration) {
	if tokens >= 1 {
		return true, tokens - 1, 0
	}
	return false, tokens, secondsToDuration((1 - tokens) / rate)
}

// RetryAfterSeconds is wait as a Retry-After value (RFC 9110 §10.2.3): whole
// seconds, rounded up so a client that waits them finds a token, and at
// least 1, since 0 would invite an immediate retry that is denied again.
func RetryAfterSeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

// secondsToDuration converts without overflowing: anything beyond maxWait,
// infinities and NaN included, is maxWait.
func secondsToDuration(seconds float64) time.Duration {
	if !(seconds < maxWait.Seconds()) {
		return maxWait
	}
	return time.Duration(seconds * float64(time.Second))
}
