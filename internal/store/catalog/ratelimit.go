package catalog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// RateWindow is the window SubscriptionRate averages the current rate over.
const RateWindow = 10 * time.Second

// SubscriptionRate is what a subscription's rate limiter has granted, as
// subs get shows it (docs/api.md, Rate limits).
type SubscriptionRate struct {
	// Current is the slots granted per second over the last RateWindow,
	// or since the limiter's current run of slots began when that is
	// later; each slot is the start of one delivery.
	Current float64
	// Throttled reports that jobs wait for their slot: the last slot
	// granted is still ahead.
	Throttled bool
	// Next is when the next slot is free; zero before the first slot.
	Next time.Time
}

// SubscriptionRate reads the limiter of subscription id at now. A
// subscription without a rate_limit, or one whose limiter has granted no
// slot yet, reads as zero.
//
// Slots are granted one every 1/rate_limit seconds from busy_since to tat
// without a gap, so the slots of the window are the part of that run
// inside it. A run that began within the window is averaged over its own
// length, so a limit reached a second ago reads as the limit.
func (s *Store) SubscriptionRate(ctx context.Context, id uuid.UUID, now time.Time) (SubscriptionRate, error) {
	var (
		limit          float64
		tat, busySince time.Time
	)
	err := s.Pool.QueryRow(ctx, subscriptionRateSQL, pgx.StrictNamedArgs{"id": id}).Scan(&limit, &tat, &busySince)
	if errors.Is(err, pgx.ErrNoRows) {
		return SubscriptionRate{}, nil
	}
	if err != nil {
		return SubscriptionRate{}, pg.Classify(fmt.Errorf("read the rate of subscription %s: %w", id, err))
	}
	return rateAt(limit, tat, busySince, now), nil
}

// rateAt is SubscriptionRate's reading of a limiter with slots granted
// from busySince to tat at limit per second.
func rateAt(limit float64, tat, busySince, now time.Time) SubscriptionRate {
	step := time.Duration(float64(time.Second) / limit)
	from, to := busySince, tat
	if start := now.Add(-RateWindow); from.Before(start) {
		from = start
	}
	if to.After(now) {
		to = now
	}
	r := SubscriptionRate{Next: tat, Throttled: tat.Add(-step).After(now)}
	if to.After(from) && now.After(from) {
		r.Current = to.Sub(from).Seconds() * limit / now.Sub(from).Seconds()
	}
	return r
}

//go:embed sql/subscription_rate.sql
var subscriptionRateSQL string
