// Package autodisable decides when a subscription that keeps failing is
// switched off (docs/concepts.md, Auto-disable). It is pure: the caller loads the failure span,
// applies the transitions below in the transaction that records an attempt,
// and acts on [Decide].
//
// The rule (docs/concepts.md, Auto-disable): a subscription's open failure span
// starts at its first failed attempt and is cleared by any successful
// delivery. When STREAMING_HUB_AUTODISABLE_ENABLED (default true) and the span
// is both sustained (now − failing_since ≥
// STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW, default 120h) and spread
// (last_failure_at − failing_since ≥ STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD,
// default 12h), the hub sets enabled = false and disabled_reason =
// auto_disabled.
//
// The spread gate matters when the decision is taken other than right after a
// failure (right after one, last_failure_at = now): a burst of failures long
// ago followed by silence is sustained but not spread, and nothing shows the
// destination is still broken.
package autodisable

import "time"

// Defaults of auto-disable (docs/concepts.md, Auto-disable).
const (
	DefaultWindow = 120 * time.Hour
	DefaultSpread = 12 * time.Hour
)

// Span is a subscription's open failure span: failing_since and
// last_failure_at. The zero Span means no span is open (both columns null).
type Span struct {
	FailingSince  time.Time
	LastFailureAt time.Time
}

// IsOpen reports whether the subscription is in a failure span.
func (s Span) IsOpen() bool {
	return !s.FailingSince.IsZero()
}

// OnFailure is the span after a failed attempt at now: it starts one if none
// is open and otherwise extends last_failure_at. last_failure_at never moves
// back, so a late-recorded attempt cannot shrink the spread.
func OnFailure(s Span, now time.Time) Span {
	if !s.IsOpen() {
		return Span{FailingSince: now, LastFailureAt: now}
	}
	if now.After(s.LastFailureAt) {
		s.LastFailureAt = now
	}
	return s
}

// OnSuccess is the span after a successful delivery: cleared.
func OnSuccess() Span {
	return Span{}
}

// Input is what [Decide] weighs.
type Input struct {
	Enabled bool // STREAMING_HUB_AUTODISABLE_ENABLED, the kill switch
	Span    Span
	Now     time.Time
	Window  time.Duration // STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW
	Spread  time.Duration // STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD
}

// Decide reports whether the subscription is to be auto-disabled now. Both
// gates are inclusive: a span exactly Window old and exactly Spread wide
// qualifies.
func Decide(in Input) bool {
	if !in.Enabled || !in.Span.IsOpen() {
		return false
	}
	sustained := in.Now.Sub(in.Span.FailingSince) >= in.Window
	spread := in.Span.LastFailureAt.Sub(in.Span.FailingSince) >= in.Spread
	return sustained && spread
}

// Policy is auto-disable's configuration.
type Policy struct {
	Enabled bool          // STREAMING_HUB_AUTODISABLE_ENABLED, the kill switch
	Window  time.Duration // STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW
	Spread  time.Duration // STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD
}

// OnFailure applies a failed attempt at now to span: the span to store
// ([OnFailure]) and whether the subscription is to be auto-disabled
// ([Decide]) once it is stored.
func (p Policy) OnFailure(span Span, now time.Time) (Span, bool) {
	span = OnFailure(span, now)
	return span, Decide(Input{Enabled: p.Enabled, Span: span, Now: now, Window: p.Window, Spread: p.Spread})
}
