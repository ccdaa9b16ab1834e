package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Recover queues again what a subscription missed: every event received
// in the range that matches it now and was never delivered to it gets a
// pending job (POST /v1/subscriptions/{id}/recover; docs/api.md, Recover).
// It is safe to repeat.
func (c *Client) Recover(ctx context.Context, id string, in hubapi.SubscriptionRecover) (hubapi.SubscriptionRecoverResult, error) {
	var out hubapi.SubscriptionRecoverResult
	path, err := subscriptionPath(id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodPost, path+"/recover", nil, in, &out)
	return out, err
}
