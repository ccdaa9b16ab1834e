package client

import (
	"context"
	"net/http"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// recoverWindow is the span of one recover request: a long range goes in
// several requests, so the progress reported moves.
const recoverWindow = time.Hour

// maxRecoverWindows bounds the requests of one recover; a longer range
// gets longer windows.
const maxRecoverWindows = 100

// RecoverSubscription queues again what a subscription missed: every event
// received in the range that matches it now and was never delivered to it
// gets a pending job (POST /v1/subscriptions/{id}/recover; docs/api.md,
// Recover). It is safe to repeat. A range goes in requests of an hour of
// received_at each (longer for a range of more than 100 hours): the
// windows are disjoint and cover the range, so the sums are what one
// request over the whole range would count. progress, if not nil, is told
// after each request how many of the windows are done.
func (c *Client) RecoverSubscription(ctx context.Context, tenant, id string, in hubapi.SubscriptionRecover, progress func(done, total int64)) (hubapi.SubscriptionRecoverResult, error) {
	since, err1 := time.Parse(time.RFC3339Nano, in.Since)
	until, err2 := time.Parse(time.RFC3339Nano, in.Until)
	if err1 != nil || err2 != nil || !since.Before(until) {
		// The hub names what is wrong with the range.
		return c.on(tenant).recover(ctx, id, in)
	}
	windows := recoverWindows(since, until, recoverWindow, maxRecoverWindows)
	total := hubapi.SubscriptionRecoverResult{DryRun: in.DryRun}
	for i, w := range windows {
		res, err := c.on(tenant).recover(ctx, id, hubapi.SubscriptionRecover{
			Since: w[0].Format(time.RFC3339Nano), Until: w[1].Format(time.RFC3339Nano), DryRun: in.DryRun,
		})
		if err != nil {
			return total, err
		}
		total.Matched += res.Matched
		total.Queued += res.Queued
		if progress != nil {
			progress(int64(i+1), int64(len(windows)))
		}
	}
	return total, nil
}

func (c *Client) recover(ctx context.Context, id string, in hubapi.SubscriptionRecover) (hubapi.SubscriptionRecoverResult, error) {
	var out hubapi.SubscriptionRecoverResult
	path, err := subscriptionPath(id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodPost, path+"/recover", nil, in, &out)
	return out, err
}

// recoverWindows cuts [since, until) into consecutive windows of size
// (longer when more than most would be needed), the last one shorter.
func recoverWindows(since, until time.Time, size time.Duration, most int) [][2]time.Time {
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
