package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListDeadLetters pages through the tenant's dead letters, most recently
// dead first: GET /v1/dead-letters.
func (c *Client) ListDeadLetters(ctx context.Context, tenant string, p hubapi.DeadLetterListParams) (hubapi.Page[hubapi.DeadLetter], error) {
	var out hubapi.Page[hubapi.DeadLetter]
	q := pageQuery(p.ListParams)
	setIfNotEmpty(q, "subscription_id", p.SubscriptionID)
	setIfNotEmpty(q, "reason", p.Reason)
	setIfNotEmpty(q, "since", p.Since)
	setIfNotEmpty(q, "until", p.Until)
	err := c.on(tenant).call(ctx, http.MethodGet, "/v1/dead-letters", q, nil, &out)
	return out, err
}

// ReplayDeadLetters sends the selected dead letters back to pending with a
// fresh attempt budget, or counts them with DryRun:
// POST /v1/dead-letters/replay. At most 1000 ids per call.
func (c *Client) ReplayDeadLetters(ctx context.Context, tenant string, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error) {
	var out hubapi.DeadLetterReplayResult
	err := c.on(tenant).call(ctx, http.MethodPost, "/v1/dead-letters/replay", nil, in, &out)
	return out, err
}
