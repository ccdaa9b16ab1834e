package service

import (
	"context"
	"time"

	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// withBreaker adds to a single subscription's view the breaker of its
// destination as the running hubs report it in their heartbeats.
func (s *Subscriptions) withBreaker(ctx context.Context, sub catalog.Subscription, view hubapi.Subscription) (hubapi.Subscription, error) {
	if sub.SinkType == sinkPull || sub.Destination == "" {
		return view, nil
	}
	now := s.now()
	states, err := s.breakers.BreakerStates(ctx, sub.TenantID, sub.Destination, now, observe.StaleAfter)
	if err != nil {
		return hubapi.Subscription{}, err
	}
	b := summarizeBreaker(sub.Destination, states, now)
	view.Breaker = &b
	return view, nil
}

// summarizeBreaker is the one state a read shows for a destination whose
// breaker several processes may hold: open when any holds it open with its
// cool-down still running (until the latest such end), else half-open when
// any is probing or past its cool-down (its next attempt is the probe),
// else closed.
func summarizeBreaker(destination string, states []oncall.BreakerState, now time.Time) hubapi.Breaker {
	out := hubapi.Breaker{Destination: destination, State: hubapi.BreakerClosed, Instances: len(states)}
	var openUntil, halfUntil time.Time
	for _, st := range states {
		switch {
		case st.State == "open" && st.OpenUntil.After(now):
			openUntil = later(openUntil, st.OpenUntil)
		default:
			halfUntil = later(halfUntil, st.OpenUntil)
		}
	}
	switch {
	case !openUntil.IsZero():
		out.State, out.OpenUntil = hubapi.BreakerOpen, &openUntil
	case len(states) > 0:
		out.State, out.OpenUntil = hubapi.BreakerHalfOpen, &halfUntil
	}
	return out
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
