package hubaccess

import (
	"context"
	"time"

	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Recovery is `hubctl subs recover` (docs/api.md, Recover); tenant is as
// for the subscription operations of Hub. in.Since and in.Until are both
// set. progress, if not nil, is told how much of the work is done, in
// units of the mode's own (seqs in direct mode, time windows remotely).
type Recovery interface {
	Recover(ctx context.Context, tenant, id string, in hubapi.SubscriptionRecover, progress func(done, total int64)) (hubapi.SubscriptionRecoverResult, error)
}

func (d *direct) Recover(ctx context.Context, tenant, id string, in hubapi.SubscriptionRecover, progress func(done, total int64)) (hubapi.SubscriptionRecoverResult, error) {
	subs, err := d.scoped(ctx, tenant)
	if err != nil {
		return hubapi.SubscriptionRecoverResult{}, err
	}
	var report func(service.RecoverProgress)
	if progress != nil {
		report = func(p service.RecoverProgress) { progress(p.Done, p.Total) }
	}
	return subs.Recover(ctx, tenant, id, in, report)
}

// RecoverWindow is the span of one recover request in remote mode: a long
// range goes in several requests, so the progress shown moves.
var RecoverWindow = time.Hour

// maxRecoverWindows bounds the requests of one recover; a longer range
// gets longer windows.
const maxRecoverWindows = 100

// Recover splits the range into windows of received_at, one request each:
// the windows are disjoint and cover the range, so the sums are what one
// request over the whole range would count.
func (r *remote) Recover(ctx context.Context, tenant, id string, in hubapi.SubscriptionRecover, progress func(done, total int64)) (hubapi.SubscriptionRecoverResult, error) {
	since, err1 := time.Parse(time.RFC3339Nano, in.Since)
	until, err2 := time.Parse(time.RFC3339Nano, in.Until)
	if err1 != nil || err2 != nil || !since.Before(until) {
		// The hub names what is wrong with the range.
		res, err := r.tenantClient(tenant).Recover(ctx, id, in)
		return res, scopeError(tenant, err)
	}
	windows := RecoverWindows(since, until, RecoverWindow, maxRecoverWindows)
	total := hubapi.SubscriptionRecoverResult{DryRun: in.DryRun}
	for i, w := range windows {
		res, err := r.tenantClient(tenant).Recover(ctx, id, hubapi.SubscriptionRecover{
			Since: w[0].Format(time.RFC3339Nano), Until: w[1].Format(time.RFC3339Nano), DryRun: in.DryRun,
		})
		if err != nil {
			return total, scopeError(tenant, err)
		}
		total.Matched += res.Matched
		total.Queued += res.Queued
		if progress != nil {
			progress(int64(i+1), int64(len(windows)))
		}
	}
	return total, nil
}

// RecoverWindows cuts [since, until) into consecutive windows of size
// (longer when more than most would be needed), the last one shorter.
func RecoverWindows(since, until time.Time, size time.Duration, most int) [][2]time.Time {
	span := until.Sub(since)
	if n := (span + size - 1) / size; n > time.Duration(most) {
		size = (span + time.Duration(most) - 1) / time.Duration(most)
	}
	var windows [][2]time.Time
	for start := since; start.Before(until); start = start.Add(size) {
		end := start.Add(size)
		if end.After(until) {
			end = until
		}
		windows = append(windows, [2]time.Time{start, end})
	}
	return windows
}
