package hubapi

import (
	"encoding/json"
	"time"
)

// Masked stands in for each credential of a sink, and for a webhook's
// signing secret, on every read (docs/concepts.md, Subscriptions). Sent back in their place on an
// update, it keeps their current values.
const Masked = "****"

// Subscription is the API's and CLI's view of a subscription: docs/concepts.md, Subscriptions'
// fields with the signing secret masked. Only creating a subscription and
// rotating its secret return the secret itself.
type Subscription struct {
	ID       string `json:"id"`
	TenantID string `json:"tenant_id"`
	Name     string `json:"name"`
	// Sink is the public configuration with its type; each credential
	// shows as "****" (a RabbitMQ URL's password in place:
	// amqp://user:****@host/vhost).
	Sink        map[string]any `json:"sink"`
	EventTypes  []string       `json:"event_types"`
	SchemaMajor int            `json:"schema_major"`
	Origin      *string        `json:"origin"`
	// Filter is the CEL expression events must satisfy, null for none.
	Filter *string `json:"filter"`
	// Ordering is "none", "tenant" or "subject": deliveries of one key in
	// seq order, one at a time (docs/concepts.md, Ordered delivery).
	Ordering string `json:"ordering"`
	// RateLimit is the ceiling in deliveries per second, null for none.
	RateLimit         *float64 `json:"rate_limit"`
	RetrySchedule     []string `json:"retry_schedule"`
	AttemptTimeout    string   `json:"attempt_timeout"`
	Enabled           bool     `json:"enabled"`
	VerificationState string   `json:"verification_state"`
	// VerificationError is the last failed probe's message while the state
	// is failed.
	VerificationError string     `json:"verification_error,omitempty"`
	DisabledReason    *string    `json:"disabled_reason"`
	FailingSince      *time.Time `json:"failing_since"`
	LastFailureAt     *time.Time `json:"last_failure_at"`
	// SigningSecret is "****" for a webhook, which has one, and left out
	// for other sinks.
	SigningSecret string `json:"signing_secret,omitempty"`
	// SignatureScheme is how a webhook signs, "lerian" or
	// "standard-webhooks" (pkg/webhook's Scheme constants); left out for
	// other sinks.
	SignatureScheme         string     `json:"signature_scheme,omitempty"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
	// Breaker is the circuit breaker of the subscription's destination as
	// the running hubs hold it; shown by a single read (not in lists), and
	// absent for pull subscriptions, which have no destination to break.
	Breaker *Breaker `json:"breaker,omitempty"`
	// Rate is the rate limiter's reading; shown by a single read (not in
	// lists) of a subscription with a rate_limit.
	Rate *Rate `json:"rate,omitempty"`
}

// Rate is what a subscription's rate limiter has let through, across
// every hub sharing the database.
type Rate struct {
	// Limit is the subscription's rate_limit.
	Limit float64 `json:"limit"`
	// Current is the deliveries started per second over the last 10 s.
	Current float64 `json:"current"`
	// Throttled says deliveries are waiting for their turn under the
	// limit (held_reason rate_limited).
	Throttled bool `json:"throttled"`
	// NextSlotAt is when the limiter lets the next delivery start; nil
	// before the first.
	NextSlotAt *time.Time `json:"next_slot_at"`
}

// Breaker states as a read shows them.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

// Breaker is the circuit breaker of one (tenant, destination). Breakers
// are kept by each hub process; a read shows the most restrictive state
// among the running ones.
type Breaker struct {
	// Destination is the breaker's key: scheme://host:port, a queue URL,
	// host + vhost + exchange, region + bus; never credentials.
	Destination string `json:"destination"`
	State       string `json:"state"`
	// OpenUntil is when an open breaker lets its next probe through (or,
	// half-open, when the probe in flight is given up); nil when closed.
	OpenUntil *time.Time `json:"open_until"`
	// Instances counts the hub processes holding it open or half-open.
	Instances int `json:"instances"`
}

// SubscriptionCreate is the body of POST /v1/subscriptions: the writable
// fields of a subscription. Fields left out take their defaults.
type SubscriptionCreate struct {
	Name       string          `json:"name"`
	Sink       json.RawMessage `json:"sink"`
	EventTypes []string        `json:"event_types"`
	// SchemaMajor defaults to 1.
	SchemaMajor *int    `json:"schema_major,omitempty"`
	Origin      *string `json:"origin,omitempty"`
	// Filter is a CEL expression over the event's attributes and JSON
	// data; nil matches every event the other rules let through.
	Filter *string `json:"filter,omitempty"`
	// Ordering "" means "none".
	Ordering string `json:"ordering,omitempty"`
	// RateLimit nil is no limit; else deliveries per second, > 0.
	RateLimit *float64 `json:"rate_limit,omitempty"`
	// RetrySchedule nil keeps the default curve.
	RetrySchedule []string `json:"retry_schedule,omitempty"`
	// AttemptTimeout "" means 10s.
	AttemptTimeout string `json:"attempt_timeout,omitempty"`
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
	// SigningSecret "" has the hub generate one (webhooks only).
	SigningSecret string `json:"signing_secret,omitempty"`
	// SignatureScheme "" means "lerian" (webhooks only). A
	// standard-webhooks subscription's secret is "whsec_" and the standard
	// base64 of 24 to 64 bytes.
	SignatureScheme string `json:"signature_scheme,omitempty"`
}

// SubscriptionUpdate is the body of PATCH /v1/subscriptions/{id}: any subset
// of the writable fields. Absent fields (nil, or a Nullable that is not Set)
// stay as they are; origin, filter, rate_limit and retry_schedule may be
// set to null to clear them.
type SubscriptionUpdate struct {
	Name *string         `json:"name,omitempty"`
	Sink json.RawMessage `json:"sink,omitempty"`
	// EventTypes is omitted when nil; an empty list is sent, and refused.
	EventTypes     []string           `json:"event_types,omitzero"`
	SchemaMajor    *int               `json:"schema_major,omitempty"`
	Origin         Nullable[string]   `json:"origin,omitzero"`
	Filter         Nullable[string]   `json:"filter,omitzero"`
	Ordering       *string            `json:"ordering,omitempty"`
	RateLimit      Nullable[float64]  `json:"rate_limit,omitzero"`
	RetrySchedule  Nullable[[]string] `json:"retry_schedule,omitzero"`
	AttemptTimeout *string            `json:"attempt_timeout,omitempty"`
	Enabled        *bool              `json:"enabled,omitempty"`
	// SigningSecret rotates to the given secret, with the overlap of a
	// secret rotation; "****", as reads show it, keeps the current one.
	SigningSecret *string `json:"signing_secret,omitempty"`
	// SignatureScheme switches how a webhook signs; a switch rotates the
	// signing secret (to SigningSecret when given, else to one the hub
	// generates and returns once), with the overlap of a secret rotation.
	SignatureScheme *string `json:"signature_scheme,omitempty"`
}

// UpdatedSubscription is the answer to PATCH /v1/subscriptions/{id}. When
// the change switched signature_scheme and brought no signing_secret of its
// own, SigningSecret is the secret the hub generated, shown this once;
// otherwise it is the subscription's own, masked.
type UpdatedSubscription struct {
	Subscription
	SigningSecret string `json:"signing_secret,omitempty"`
}

// Nullable is a PATCH field that can be absent, null or a value: Set says
// the request named it, Null that it named it as null.
type Nullable[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// SetTo returns a Nullable holding v.
func SetTo[T any](v T) Nullable[T] { return Nullable[T]{Set: true, Value: v} }

// SetNull returns a Nullable that clears its field.
func SetNull[T any]() Nullable[T] { return Nullable[T]{Set: true, Null: true} }

// UnmarshalJSON records that the field was present, and whether as null.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	*n = Nullable[T]{Set: true}
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// MarshalJSON writes null or the value; with omitzero an unset field is
// left out.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.Null || !n.Set {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// SecretRotation is the answer to POST /v1/subscriptions/{id}/rotate-secret
// (docs/api.md). The previous secret's expiry is null when the hub keeps no
// overlap.
type SecretRotation struct {
	SigningSecret           string     `json:"signing_secret"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
}

// CreatedSubscription is the answer to POST /v1/subscriptions: the
// subscription, plus, for a webhook, its signing secret — the one read that
// shows it (docs/api.md). The secret sits beside the subscription's fields
// rather than inside Subscription so no other answer can carry it; being
// the shallower field, it takes the place of Subscription's masked one in
// JSON.
type CreatedSubscription struct {
	Subscription
	SigningSecret string `json:"signing_secret,omitempty"`
}

// SecretRotate is the optional body of POST
// /v1/subscriptions/{id}/rotate-secret: the caller's own new secret (at
// least 24 characters), or "" (or no body) to have the hub generate one.
type SecretRotate struct {
	SigningSecret string `json:"signing_secret,omitempty"`
}

// SubscriptionDeleted is the answer to DELETE /v1/subscriptions/{id}: which
// subscription went and how many of its pending deliveries were canceled
// with it. Deliveries already in flight finish their attempt.
type SubscriptionDeleted struct {
	ID           string `json:"id"`
	CanceledJobs int64  `json:"canceled_jobs"`
}
