package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// DeadLetterListOptions select a page of dead letters, most recently dead
// first. Every filter is optional: SubscriptionID, Reason (one of
// hubapi.DeadReasons), and Since (inclusive) / Until (exclusive) on
// dead_at in RFC 3339.
type DeadLetterListOptions struct {
	ListOptions
	SubscriptionID string
	Reason         string
	Since, Until   string
}

// ListDeadLetters pages through the tenant's dead letters:
// GET /v1/dead-letters.
func (c *Client) ListDeadLetters(ctx context.Context, opts DeadLetterListOptions) (hubapi.Page[hubapi.DeadLetter], error) {
	var out hubapi.Page[hubapi.DeadLetter]
	q := opts.query()
	setIfNotEmpty(q, "subscription_id", opts.SubscriptionID)
	setIfNotEmpty(q, "reason", opts.Reason)
	setIfNotEmpty(q, "since", opts.Since)
	setIfNotEmpty(q, "until", opts.Until)
	err := c.call(ctx, http.MethodGet, "/v1/dead-letters", q, nil, &out)
	return out, err
}

// ReplayDeadLetters sends the selected dead letters back to pending with a
// fresh attempt budget, or counts them with DryRun:
// POST /v1/dead-letters/replay. At most 1000 ids per call.
func (c *Client) ReplayDeadLetters(ctx context.Context, in hubapi.DeadLetterReplay) (hubapi.DeadLetterReplayResult, error) {
	var out hubapi.DeadLetterReplayResult
	err := c.call(ctx, http.MethodPost, "/v1/dead-letters/replay", nil, in, &out)
	return out, err
}
