package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ListDeliveries pages through a subscription's deliveries, newest event
// first: GET /v1/subscriptions/{id}/deliveries. Another tenant's
// subscription answers 404 subscription_not_found, like a missing one.
func (c *Client) ListDeliveries(ctx context.Context, tenant, subscriptionID string, p hubapi.DeliveryListParams) (hubapi.Page[hubapi.Delivery], error) {
	var out hubapi.Page[hubapi.Delivery]
	path, err := subscriptionPath(subscriptionID)
	if err != nil {
		return out, err
	}
	q := pageQuery(p.ListParams)
	setIfNotEmpty(q, "state", p.State)
	setIfNotEmpty(q, "since", p.Since)
	setIfNotEmpty(q, "until", p.Until)
	err = c.on(tenant).call(ctx, http.MethodGet, path+"/deliveries", q, nil, &out)
	return out, err
}

// CountDeliveries counts each subscription's deliveries of the last day, by
// where they stand now: GET /v1/delivery-counts. Another tenant's
// subscription answers 404 subscription_not_found, like a missing one.
func (c *Client) CountDeliveries(ctx context.Context, tenant string, subscriptionIDs []string) (hubapi.DeliveryCounts, error) {
	var out hubapi.DeliveryCounts
	q := url.Values{}
	setIfNotEmpty(q, "subscription_ids", strings.Join(subscriptionIDs, ","))
	err := c.on(tenant).call(ctx, http.MethodGet, "/v1/delivery-counts", q, nil, &out)
	return out, err
}

// AttemptLatency reads a subscription's attempt durations per hour of the
// last day: GET /v1/subscriptions/{id}/latency. Another tenant's
// subscription answers 404 subscription_not_found, like a missing one.
func (c *Client) AttemptLatency(ctx context.Context, tenant, subscriptionID string) (hubapi.AttemptLatency, error) {
	var out hubapi.AttemptLatency
	path, err := subscriptionPath(subscriptionID)
	if err != nil {
		return out, err
	}
	err = c.on(tenant).call(ctx, http.MethodGet, path+"/latency", nil, nil, &out)
	return out, err
}

// GetDelivery reads one delivery with every attempt it made, oldest first:
// GET /v1/deliveries/{id}. Another tenant's delivery answers 404
// delivery_not_found, like a missing one.
func (c *Client) GetDelivery(ctx context.Context, tenant, id string) (hubapi.DeliveryDetail, error) {
	var out hubapi.DeliveryDetail
	escaped, err := segment("delivery id", id)
	if err != nil {
		return out, err
	}
	err = c.on(tenant).call(ctx, http.MethodGet, "/v1/deliveries/"+escaped, nil, nil, &out)
	return out, err
}
