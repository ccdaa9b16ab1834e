package service

import (
	"errors"
	"fmt"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Error codes (docs/api.md) that the use cases produce.
const (
	CodeTenantAlreadyExists = "tenant_already_exists"
)

func invalid(field, format string, args ...any) *hubapi.ValidationError {
	return &hubapi.ValidationError{Field: field, Code: hubapi.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// tenantError turns the store's typed answers about one tenant into the
// service's errors; other errors pass through unchanged.
func tenantError(id string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pg.ErrNotFound):
		return &hubapi.NotFoundError{Code: hubapi.CodeTenantNotFound, Message: fmt.Sprintf("tenant %q not found", id), Err: err}
	case errors.Is(err, pg.ErrConflict):
		return &hubapi.ConflictError{Code: CodeTenantAlreadyExists, Message: fmt.Sprintf("tenant %q already exists", id), Err: err}
	}
	return err
}

// Codes of the subscription use cases (docs/api.md). not_a_webhook_subscription
// is the hub's own: rotating the secret of a sink that signs nothing is a
// conflict with the resource's kind, like not_a_pull_subscription.
const (
	CodeSubscriptionNotFound    = "subscription_not_found"
	CodeInvalidSink             = "invalid_sink"
	CodeInvalidRetrySchedule    = "invalid_retry_schedule"
	CodeVerificationFailed      = "verification_failed"
	CodeNotAPullSubscription    = "not_a_pull_subscription"
	CodeNotAWebhookSubscription = "not_a_webhook_subscription"
	// CodeSubscriptionLimitReached is a 409: the request is valid, and
	// the tenant's own state (how many subscriptions it has) refuses it
	// until it deletes one, as tenant_already_exists is refused until the
	// tenant is gone.
	CodeSubscriptionLimitReached = "subscription_limit_reached"
)

// subscriptionError turns the store's ErrNotFound about one subscription
// into the service's error; other errors pass through unchanged.
func subscriptionError(id string, err error) error {
	if errors.Is(err, pg.ErrNotFound) {
		return &hubapi.NotFoundError{Code: CodeSubscriptionNotFound, Message: fmt.Sprintf("subscription %q not found", id), Err: err}
	}
	return err
}

// CodeDeliveryNotFound answers a delivery that is missing or another
// tenant's (docs/api.md).
const CodeDeliveryNotFound = "delivery_not_found"
