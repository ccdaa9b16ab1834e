package client

import (
	"context"
	"net/http"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The tenant API (docs/api.md) acts on the tenant each call names, ""
// meaning the token's own (or WithTenant's, for the admin token). A tenant
// key naming another tenant is refused (403 forbidden); another tenant's
// subscription answers 404, exactly like a missing one.

// CreateSubscription stores and verifies a subscription:
// POST /v1/subscriptions. The answer's SigningSecret is the webhook's
// secret, shown only here and by RotateSecret; "" for sinks that do not
// sign. A failed verification does not fail the call: the subscription's
// VerificationState says so.
func (c *Client) CreateSubscription(ctx context.Context, tenant string, in hubapi.SubscriptionCreate) (hubapi.CreatedSubscription, error) {
	var out hubapi.CreatedSubscription
	err := c.on(tenant).call(ctx, http.MethodPost, "/v1/subscriptions", nil, in, &out)
	return out, err
}

// ListSubscriptions pages through the tenant's subscriptions, oldest first:
// GET /v1/subscriptions.
func (c *Client) ListSubscriptions(ctx context.Context, tenant string, p hubapi.ListParams) (hubapi.Page[hubapi.Subscription], error) {
	var out hubapi.Page[hubapi.Subscription]
	err := c.on(tenant).call(ctx, http.MethodGet, "/v1/subscriptions", pageQuery(p), nil, &out)
	return out, err
}

// GetSubscription reads one subscription: GET /v1/subscriptions/{id}.
func (c *Client) GetSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	return c.on(tenant).subscriptionCall(ctx, http.MethodGet, id, "", nil)
}

// UpdateSubscription applies the fields in sets: PATCH /v1/subscriptions/{id}.
// A changed sink is verified again. A switch of signature_scheme without a
// signing_secret of its own rotates to a generated secret, the answer's
// SigningSecret, shown only here; otherwise SigningSecret is "****" for a
// webhook.
func (c *Client) UpdateSubscription(ctx context.Context, tenant, id string, in hubapi.SubscriptionUpdate) (hubapi.UpdatedSubscription, error) {
	var out hubapi.UpdatedSubscription
	path, err := subscriptionPath(id)
	if err != nil {
		return out, err
	}
	if err = c.on(tenant).call(ctx, http.MethodPatch, path, nil, in, &out); err != nil {
		return out, err
	}
	// The answer's one signing_secret field decodes into the outer
	// struct; the subscription itself shows its secret masked.
	if out.SigningSecret != "" {
		out.Subscription.SigningSecret = hubapi.Masked
	}
	return out, nil
}

// DeleteSubscription deletes a subscription and cancels its pending
// deliveries, answering how many: DELETE /v1/subscriptions/{id}.
func (c *Client) DeleteSubscription(ctx context.Context, tenant, id string) (hubapi.SubscriptionDeleted, error) {
	var out hubapi.SubscriptionDeleted
	path, err := subscriptionPath(id)
	if err != nil {
		return out, err
	}
	err = c.on(tenant).call(ctx, http.MethodDelete, path, nil, nil, &out)
	return out, err
}

// EnableSubscription turns delivery back on:
// POST /v1/subscriptions/{id}/enable.
func (c *Client) EnableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	return c.on(tenant).subscriptionCall(ctx, http.MethodPost, id, "/enable", nil)
}

// DisableSubscription stops delivery: POST /v1/subscriptions/{id}/disable.
func (c *Client) DisableSubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	return c.on(tenant).subscriptionCall(ctx, http.MethodPost, id, "/disable", nil)
}

// VerifySubscription probes the destination again (docs/concepts.md, Verification):
// POST /v1/subscriptions/{id}/verify. A failed probe is a *Error with
// status 422 and code verification_failed whose message is the probe's.
func (c *Client) VerifySubscription(ctx context.Context, tenant, id string) (hubapi.Subscription, error) {
	return c.on(tenant).subscriptionCall(ctx, http.MethodPost, id, "/verify", nil)
}

// RotateSecret gives a webhook a new signing secret, signingSecret or, when
// it is "", one the hub generates: POST /v1/subscriptions/{id}/rotate-secret.
// The previous secret keeps signing until the answer's
// PreviousSecretExpiresAt (docs/concepts.md, Secret rotation).
func (c *Client) RotateSecret(ctx context.Context, tenant, id, signingSecret string) (hubapi.SecretRotation, error) {
	var out hubapi.SecretRotation
	path, err := subscriptionPath(id)
	if err != nil {
		return out, err
	}
	err = c.on(tenant).call(ctx, http.MethodPost, path+"/rotate-secret", nil, hubapi.SecretRotate{SigningSecret: signingSecret}, &out)
	return out, err
}

// subscriptionCall calls a route of one subscription that answers with it.
func (c *Client) subscriptionCall(ctx context.Context, method, id, suffix string, in any) (hubapi.Subscription, error) {
	var out hubapi.Subscription
	path, err := subscriptionPath(id)
	if err != nil {
		return out, err
	}
	err = c.call(ctx, method, path+suffix, nil, in, &out)
	return out, err
}

func subscriptionPath(id string) (string, error) {
	escaped, err := segment("subscription id", id)
	if err != nil {
		return "", err
	}
	return "/v1/subscriptions/" + escaped, nil
}
