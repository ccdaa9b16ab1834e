package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// DeliveryListOptions select a page of a subscription's deliveries, newest
// first; State, when set, keeps only deliveries in that state (one of
// hubapi.DeliveryStates).
type DeliveryListOptions struct {
	ListOptions
	State string
}

// ListDeliveries pages through a subscription's deliveries, newest event
// first: GET /v1/subscriptions/{id}/deliveries. Another tenant's
// subscription answers 404 subscription_not_found, like a missing one.
func (c *Client) ListDeliveries(ctx context.Context, subscriptionID string, opts DeliveryListOptions) (hubapi.Page[hubapi.Delivery], error) {
	var out hubapi.Page[hubapi.Delivery]
	path, err := subscriptionPath(subscriptionID)
	if err != nil {
		return out, err
	}
	q := opts.query()
	setIfNotEmpty(q, "state", opts.State)
	err = c.call(ctx, http.MethodGet, path+"/deliveries", q, nil, &out)
	return out, err
}

// GetDelivery reads one delivery with every attempt it made, oldest first:
// GET /v1/deliveries/{id}. Another tenant's delivery answers 404
// delivery_not_found, like a missing one.
func (c *Client) GetDelivery(ctx context.Context, id string) (hubapi.DeliveryDetail, error) {
	var out hubapi.DeliveryDetail
	escaped, err := segment("delivery id", id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, http.MethodGet, "/v1/deliveries/"+escaped, nil, nil, &out)
	return out, err
}
