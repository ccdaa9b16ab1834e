package service

import (
	"errors"
	"fmt"

	"github.com/hubctl/hubctl/internal/store"
)

// Error codes (docs/api.md) that the use cases produce.
const (
	CodeInvalidRequest      = "invalid_request"
	CodeTenantNotFound      = "tenant_not_found"
	CodeTenantAlreadyExists = "tenant_already_exists"
)

// ValidationError rejects input before anything is read or written. Field
// names the offending input as the API spells it (a JSON field or query
// parameter), so the API can report it in details.field.
type ValidationError struct {
	Field   string
	Code    string
	Message string
	// Details are more facts for details beside the field, such as where
	// in a filter expression the error is.
	Details map[string]any
}

func (e *ValidationError) Error() string { return e.Message }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Code: CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// NotFoundError says the named resource does not exist (or, for a tenant
// API caller, belongs to another tenant: the two must look the same).
type NotFoundError struct {
	Code    string
	Message string
	Err     error
}

func (e *NotFoundError) Error() string { return e.Message }

// Unwrap exposes the store's ErrNotFound, and through it the store's message.
func (e *NotFoundError) Unwrap() error { return e.Err }

// ConflictError says the request clashes with what exists, such as creating
// a tenant twice.
type ConflictError struct {
	Code    string
	Message string
	Err     error
}

func (e *ConflictError) Error() string { return e.Message }

// Unwrap exposes the store's ErrConflict.
func (e *ConflictError) Unwrap() error { return e.Err }

// tenantError turns the store's typed answers about one tenant into the
// service's errors; other errors pass through unchanged.
func tenantError(id string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return &NotFoundError{Code: CodeTenantNotFound, Message: fmt.Sprintf("tenant %q not found", id), Err: err}
	case errors.Is(err, store.ErrConflict):
		return &ConflictError{Code: CodeTenantAlreadyExists, Message: fmt.Sprintf("tenant %q already exists", id), Err: err}
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

// UnprocessableError says the request was well formed and the resource
// exists, but what it asked for could not be achieved (422): a verification
// probe that failed carries the probe's own message.
type UnprocessableError struct {
	Code    string
	Message string
}

func (e *UnprocessableError) Error() string { return e.Message }

// subscriptionError turns the store's ErrNotFound about one subscription
// into the service's error; other errors pass through unchanged.
func subscriptionError(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &NotFoundError{Code: CodeSubscriptionNotFound, Message: fmt.Sprintf("subscription %q not found", id), Err: err}
	}
	return err
}

// CodeDeliveryNotFound answers a delivery that is missing or another
// tenant's (docs/api.md).
const CodeDeliveryNotFound = "delivery_not_found"
