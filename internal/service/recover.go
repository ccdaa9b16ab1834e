package service

import (
	"context"
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// CodeNotAPushSubscription refuses recovering a pull subscription
// (docs/api.md, Recover). It mirrors not_a_pull_subscription: a pull
// subscription's reader moves its own cursor, and entries put behind it
// would never be read.
const CodeNotAPushSubscription = "not_a_push_subscription"

// RecoverProgress reports a recover's progress (queue.RecoverProgress).
type RecoverProgress = queue.RecoverProgress

// Recover gives the subscription a pending job for every event received in
// the range that matches it now and was never delivered to it (docs/api.md,
// Recover). A disabled subscription is refused unless on a dry run: its
// jobs would go straight to the dead letters. progress, if not nil, is
// called after each batch.
func (s *Subscriptions) Recover(ctx context.Context, tenantID, id string, in hubapi.SubscriptionRecover, progress func(RecoverProgress)) (hubapi.SubscriptionRecoverResult, error) {
	r, err := s.checkRecover(tenantID, id, in)
	if err != nil {
		return hubapi.SubscriptionRecoverResult{}, err
	}
	sub, err := s.read(ctx, tenantID, id)
	if err != nil {
		return hubapi.SubscriptionRecoverResult{}, err
	}
	if sub.SinkType == "pull" {
		return hubapi.SubscriptionRecoverResult{}, &hubapi.ConflictError{Code: CodeNotAPushSubscription,
			Message: fmt.Sprintf("subscription %q is a pull subscription: its reader's cursor decides what it reads again", id)}
	}
	if !sub.Enabled && !in.DryRun {
		return hubapi.SubscriptionRecoverResult{}, &hubapi.ConflictError{Code: hubapi.CodeSubscriptionDisabled,
			Message: fmt.Sprintf("subscription %q is disabled: enable it first, or pass dry_run to only count", id)}
	}
	res, err := s.jobs.Recover(ctx, r, recoverRoute, s.now(), in.DryRun, queue.DefaultRecoverBatch, progress)
	if err != nil {
		return hubapi.SubscriptionRecoverResult{}, subscriptionError(id, err)
	}
	return hubapi.SubscriptionRecoverResult{Matched: res.Matched, Queued: res.Queued, DryRun: in.DryRun}, nil
}

// checkRecover validates a recover before any I/O.
func (s *Subscriptions) checkRecover(tenantID, id string, in hubapi.SubscriptionRecover) (queue.RecoverRange, error) {
	if in.Since == "" {
		return queue.RecoverRange{}, invalid("since", "since is required: the RFC 3339 time to recover from, e.g. 2026-01-02T15:04:05Z")
	}
	since, err := parseBound("since", in.Since)
	if err != nil {
		return queue.RecoverRange{}, err
	}
	until, err := parseBound("until", in.Until)
	if err != nil {
		return queue.RecoverRange{}, err
	}
	if until.IsZero() {
		until = s.now()
	}
	if !since.Before(until) {
		return queue.RecoverRange{}, invalid("until", "until (%s) must be after since (%s)", until.UTC().Format(time.RFC3339), in.Since)
	}
	subID, err := s.scope(tenantID, id)
	if err != nil {
		return queue.RecoverRange{}, err
	}
	return queue.RecoverRange{TenantID: tenantID, SubscriptionID: subID, Since: since, Until: until}, nil
}

// recoverRoute matches a recover's events as ingest matched them, without
// ingest's filter limits: a recover is an operator's request, run once,
// and not a neighbour of other tenants' ingest.
var recoverRoute = match.Router(match.FilterLimits{})
