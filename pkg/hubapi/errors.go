package hubapi

import (
	"errors"
	"fmt"
	"regexp"
)

// Codes of the control plane's refusals that belong to no one resource
// (docs/api.md, Errors); each operation brings its own beside them.
const (
	CodeInvalidRequest = "invalid_request"
	CodeForbidden      = "forbidden"
	CodeTenantNotFound = "tenant_not_found"
)

// The typed errors of the control plane. An in-process implementation
// returns them; the HTTP API answers each with its status (400, 403, 404,
// 409, 422) and its code, and pkg/client hands the answer back as a
// *client.Error wrapping the *Error body. ErrorCode reads the code of
// either, so a front end needs no switch on how it reached the hub.

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

// ForbiddenError refuses a caller an operation it may not perform at all:
// a tenant API key calling an admin operation or naming another tenant.
type ForbiddenError struct {
	Code    string
	Message string
}

func (e *ForbiddenError) Error() string { return e.Message }

// NotFoundError says the named resource does not exist (or, for a tenant
// API caller, belongs to another tenant: the two must look the same).
type NotFoundError struct {
	Code    string
	Message string
	// Err is the cause, such as the store's not-found error, for errors.Is.
	Err error
}

func (e *NotFoundError) Error() string { return e.Message }

func (e *NotFoundError) Unwrap() error { return e.Err }

// ConflictError says the request clashes with what exists, such as creating
// a tenant twice.
type ConflictError struct {
	Code    string
	Message string
	// Err is the cause, such as the store's conflict error, for errors.Is.
	Err error
}

func (e *ConflictError) Error() string { return e.Message }

func (e *ConflictError) Unwrap() error { return e.Err }

// UnprocessableError says the request was well formed and the resource
// exists, but what it asked for could not be achieved (422): a verification
// probe that failed carries the probe's own message.
type UnprocessableError struct {
	Code    string
	Message string
}

func (e *UnprocessableError) Error() string { return e.Message }

// ErrorCode is the hub's error code (docs/api.md, Errors) of err, whichever
// implementation of ControlPlane returned it; "" when err carries none.
func ErrorCode(err error) string {
	var (
		wire          *Error
		invalid       *ValidationError
		forbidden     *ForbiddenError
		notFound      *NotFoundError
		conflict      *ConflictError
		unprocessable *UnprocessableError
	)
	switch {
	case errors.As(err, &wire):
		return wire.Code
	case errors.As(err, &invalid):
		return invalid.Code
	case errors.As(err, &forbidden):
		return forbidden.Code
	case errors.As(err, &notFound):
		return notFound.Code
	case errors.As(err, &conflict):
		return conflict.Code
	case errors.As(err, &unprocessable):
		return unprocessable.Code
	}
	return ""
}

// TenantIDRule is the form of a tenant id (the tenantid attribute:
// docs/concepts.md, Events), as error messages show it.
const TenantIDRule = `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`

var tenantIDPattern = regexp.MustCompile(`^` + TenantIDRule + `$`)

// CheckTenantID rejects an id that no event could carry, so that a typo
// fails with the rule instead of creating a tenant ingest can never admit
// or answering "not found" for a name that cannot exist.
func CheckTenantID(id string) error {
	if !tenantIDPattern.MatchString(id) {
		return &ValidationError{Field: "id", Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid tenant id %q: must match %s", id, TenantIDRule)}
	}
	return nil
}

// Refusals of authenticating a tenant API key. The API answers
// ErrInvalidAPIKey with 401 and ErrTenantInactive with 403: the key is
// genuine, so trying another one of the same tenant would not help.
var (
	// ErrInvalidAPIKey means the token is not a live key: malformed,
	// unknown or revoked. The causes are not told apart, so a caller cannot
	// learn which tokens once existed.
	ErrInvalidAPIKey = errors.New("invalid or revoked API key")
	// ErrTenantInactive means the key is live but its tenant is inactive.
	// Deactivating a tenant (docs/concepts.md, Tenants) is the operator's
	// off switch: ingest stops admitting its events, and its keys stop
	// working too, until it is activated again. The admin still acts on it.
	ErrTenantInactive = errors.New("the tenant of this API key is inactive")
)
