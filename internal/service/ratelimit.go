package service

import (
	"context"
	"math"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// withRate adds the rate limiter's reading to a single read of a
// subscription with a rate_limit (docs/api.md, Rate limits).
func (s *Subscriptions) withRate(ctx context.Context, sub catalog.Subscription, view hubapi.Subscription) (hubapi.Subscription, error) {
	if sub.RateLimit <= 0 {
		return view, nil
	}
	r, err := s.store.SubscriptionRate(ctx, sub.ID, s.now())
	if err != nil {
		return hubapi.Subscription{}, err
	}
	view.Rate = &hubapi.Rate{Limit: sub.RateLimit, Current: math.Round(r.Current*100) / 100, Throttled: r.Throttled}
	if !r.Next.IsZero() {
		next := r.Next.UTC()
		view.Rate.NextSlotAt = &next
	}
	return view, nil
}
