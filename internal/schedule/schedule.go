// Package schedule decides when a failed delivery is attempted again
// (docs/concepts.md, Retries). It is pure: the caller supplies the attempt count and the
// randomness, and gets back a wait.
//
// The rule (docs/concepts.md, Retries): on failure the next attempt is
// scheduled on the curve 0s · 5s · 5m · 30m · 2h · 5h · 10h · 10h with full
// jitter: step n waits a uniformly random duration in [0, step_n]. The first
// step is the first attempt; after the 8th failed attempt the job is
// dead-lettered. A subscription may override the curve with 1–12 Go durations,
// each 0 ≤ d ≤ 10h; a stored override that is malformed falls back to the
// default curve instead of failing the delivery. A 429 or 503 response with
// Retry-After delays the next attempt to at least that long (capped at 10h).
//
// So a curve of k steps allows k attempts: step 1 is the wait before attempt 1,
// step n+1 the wait before attempt n+1, i.e. after the n-th failure.
package schedule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Bounds of a retry_schedule override (docs/concepts.md, Subscriptions).
const (
	MaxSteps = 12
	MaxStep  = 10 * time.Hour
	// Longest is the longest curve any subscription may have: every step
	// at its maximum. Retention is never shorter.
	Longest = MaxSteps * MaxStep
)

// ErrInvalid is wrapped by every error of [Parse]; the API maps it to
// 400 invalid_retry_schedule.
var ErrInvalid = errors.New("invalid retry_schedule")

// Curve is a retry curve: the upper bound of the jittered wait before each
// attempt. It is immutable. The zero Curve behaves as [Default], so a
// forgotten initialisation can never make every job dead on its first failure.
type Curve struct {
	steps []time.Duration
}

// Default is the retry curve (docs/concepts.md, Retries): 8 attempts, about 28h in all.
var Default = Curve{steps: []time.Duration{
	0,
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}}

// Parse validates an override as the API receives it. Errors wrap
// [ErrInvalid], name the offending step (counted from 1) and say what is
// allowed.
func Parse(steps []string) (Curve, error) {
	if len(steps) < 1 || len(steps) > MaxSteps {
		return Curve{}, fmt.Errorf("%w: list 1 to %d steps, got %d", ErrInvalid, MaxSteps, len(steps))
	}
	parsed := make([]time.Duration, len(steps))
	for i, text := range steps {
		d, err := time.ParseDuration(text)
		if err != nil {
			return Curve{}, fmt.Errorf("%w: step %d (%q) is not a Go duration such as 30s or 5m", ErrInvalid, i+1, text)
		}
		if d < 0 || d > MaxStep {
			return Curve{}, fmt.Errorf("%w: step %d (%s) must be between 0s and 10h", ErrInvalid, i+1, text)
		}
		parsed[i] = d
	}
	return Curve{steps: parsed}, nil
}

// ForSubscription returns the curve a delivery runs on. No override (nil or
// empty) means [Default]. An override that does not parse also gives
// [Default], together with the reason, so the caller can log it; the curve
// returned is always usable.
func ForSubscription(stored []string) (curve Curve, ignored error) {
	if len(stored) == 0 {
		return Default, nil
	}
	c, err := Parse(stored)
	if err != nil {
		return Default, fmt.Errorf("stored override ignored, default curve used: %w", err)
	}
	return c, nil
}

// Attempts is how many attempts the curve allows before the job is
// dead-lettered as exhausted.
func (c Curve) Attempts() int {
	return len(c.effective())
}

// Steps returns a copy of the curve's upper bounds, step 1 first.
func (c Curve) Steps() []time.Duration {
	return append([]time.Duration(nil), c.effective()...)
}

// Next says what follows once attemptsMade attempts have been made and all
// failed: the wait before attempt attemptsMade+1, drawn uniformly from
// [0, step_{attemptsMade+1}], or exhausted when the curve has no further
// step. Next(0, rnd) is the wait before the first attempt.
//
// rnd must return values in [0, 1), like rand.Float64; nil uses math/rand/v2.
// A value outside that range is clamped, so the delay never leaves the step.
// A negative attemptsMade counts as 0.
func (c Curve) Next(attemptsMade int, rnd func() float64) (delay time.Duration, exhausted bool) {
	steps := c.effective()
	attemptsMade = max(attemptsMade, 0)
	if attemptsMade >= len(steps) {
		return 0, true
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	return jitter(steps[attemptsMade], rnd()), false
}

// ApplyRetryAfter lengthens a scheduled wait to honour a Retry-After of a
// 429 or 503 response: the result is at least retryAfter, but a Retry-After
// beyond [MaxStep] only buys MaxStep, so a destination cannot park a job for
// longer than the curve itself ever would. A non-positive retryAfter (absent
// or unparsable header) leaves delay as it is.
func ApplyRetryAfter(delay, retryAfter time.Duration) time.Duration {
	return max(delay, min(retryAfter, MaxStep))
}

func (c Curve) effective() []time.Duration {
	if c.steps == nil {
		return Default.steps
	}
	return c.steps
}

// jitter scales step by r ∈ [0, 1). The comparisons are written so that NaN
// falls to 0 as well.
func jitter(step time.Duration, r float64) time.Duration {
	if !(r > 0) {
		return 0
	}
	if r >= 1 {
		return step
	}
	return min(time.Duration(r*float64(step)), step)
}
