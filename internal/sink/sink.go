// Package sink is the one interface every destination implements (docs/concepts.md, Sinks)
// and the registry that maps a subscription's sink type to it. Adding a sink
// is one package under internal/sink/ and one line in the registry.
//
// A sink makes exactly one attempt and says what happened; it never
// retries, sleeps or records anything: dispatch owns retries, the breaker
// and bookkeeping.
package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Delivery is one attempt to hand one event to one destination.
type Delivery struct {
	// DeliveryID is new for every attempt (X-Lerian-Delivery-Id).
	DeliveryID string
	EventID    string // CloudEvents id, stable across attempts
	EventKey   string // <resourcetype>.<eventtype>
	TenantID   string
	// CloudEvents attributes a destination may carry.
	Source          string
	Type            string
	Time            time.Time
	SchemaVersion   string
	Subject         string
	DataContentType string // "" means application/json
	DataSchema      string
	TraceParent     string
	TraceState      string
	// OrderingKey is the job's ordering key when the subscription orders
	// its deliveries (docs/concepts.md, Ordering), else "". Dispatch
	// already holds a key's next job until this one ends; a destination
	// with ordering of its own (Pub/Sub) also carries it, so its
	// consumers receive the key's events in order.
	OrderingKey string
	// Payload is the stored event data, byte for byte.
	Payload []byte
	// Timeout bounds the attempt (the subscription's attempt_timeout).
	Timeout time.Duration
}

// Outcome is what one attempt achieved.
type Outcome struct {
	OK         bool
	StatusCode int    // HTTP status where the protocol has one, else 0
	Error      string // why it failed; no credentials, no payload
	// Response is the start of what the destination answered (≤ 1 KiB).
	Response []byte
	// RetryAfter is the destination's own request to wait (429/503
	// Retry-After); zero when it made none.
	RetryAfter time.Duration
	// NotSent marks a failure decided before anything was sent: the event
	// cannot be carried to this kind of destination (too large, an empty
	// body SQS refuses, a request that cannot be built). It says nothing
	// about the destination's health, so its circuit breaker does not
	// hear of it.
	NotSent bool
}

// MaxResponseBytes bounds Outcome.Response (docs/concepts.md, Dispatch).
const MaxResponseBytes = 1024

// The bounds of a subscription's attempt_timeout (docs/concepts.md, Subscriptions). Sinks use the
// default for a delivery or probe that carries none, and set their
// transports' own timeouts at the maximum as a backstop, so the attempt's
// deadline is always the one that fires.
const (
	MinAttemptTimeout     = time.Second
	DefaultAttemptTimeout = 10 * time.Second
	MaxAttemptTimeout     = 60 * time.Second
)

// AttemptTimeout is the deadline of one attempt or probe: the given timeout,
// or DefaultAttemptTimeout when none was given.
func AttemptTimeout(t time.Duration) time.Duration {
	if t <= 0 {
		return DefaultAttemptTimeout
	}
	return t
}

// Sink is one configured destination.
type Sink interface {
	// Deliver makes exactly one attempt.
	Deliver(ctx context.Context, d Delivery) Outcome
	// Probe checks that the destination is reachable and accepts us
	// (verification: docs/concepts.md, Verification).
	Probe(ctx context.Context, p ProbeRequest) error
	// Close releases connections held for this sink.
	Close() error
}

// ProbeRequest carries what a verification probe needs to identify itself.
type ProbeRequest struct {
	SubscriptionID string
	TenantID       string
	Timeout        time.Duration
	// EventTypes are the subscription's event keys, for sinks whose
	// destination routes by the event key.
	EventTypes []string
}

// Config is a sink's configuration split the way it is stored: Public is
// shown on reads; Credentials are encrypted at rest and never returned.
type Config struct {
	Public      json.RawMessage
	Credentials json.RawMessage // nil when the sink type has none
	// Destination is the circuit-breaker key (docs/concepts.md, Circuit breaker), free of
	// credentials: scheme://host:port, queue URL, host+vhost+exchange, …
	Destination string
	// SignatureScheme is how a webhook signs ("" or "lerian", or
	// "standard-webhooks"); it comes from the subscription, not from the
	// sink object, and other types ignore it.
	SignatureScheme string
	// PreviousSignatureScheme is how the second signing secret signs
	// during a rotation overlap, "" for SignatureScheme: a switch of
	// scheme rotates the secret, and the rotated-out one keeps signing in
	// the scheme its receiver still verifies (docs/api.md, Signature
	// schemes).
	PreviousSignatureScheme string
}

// FieldError is a configuration problem tied to one field of the sink
// object, so the API can answer 400 invalid_sink with details.field.
type FieldError struct {
	Field   string // e.g. "sink.url"
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Type is one kind of destination. A Type is built once per hub with what
// its sinks share (an HTTP transport, the outbound address policy, broker
// connections), so sinks of many subscriptions reuse connections.
type Type interface {
	// Name is the value of sink.type.
	Name() string
	// Parse validates the user's sink object (with "type") and splits it.
	// Errors are *FieldError.
	Parse(raw json.RawMessage) (Config, error)
	// Open builds a sink from a parsed configuration whose Credentials are
	// decrypted. signingSecrets are the webhook secrets, newest first
	// (two during a rotation overlap); other types ignore them.
	Open(cfg Config, signingSecrets []string) (Sink, error)
}

// Registry maps sink type names to their implementations.
type Registry struct {
	types map[string]Type
	names []string
}

// NewRegistry registers types; a duplicate name is a programming error.
func NewRegistry(types ...Type) (*Registry, error) {
	r := &Registry{types: map[string]Type{}}
	for _, t := range types {
		if _, dup := r.types[t.Name()]; dup {
			return nil, fmt.Errorf("sink type %q registered twice", t.Name())
		}
		r.types[t.Name()] = t
		r.names = append(r.names, t.Name())
	}
	return r, nil
}

// ErrUnknownType is returned for a sink.type nobody registered.
var ErrUnknownType = errors.New("unknown sink type")

// Lookup finds a type by name.
func (r *Registry) Lookup(name string) (Type, error) {
	t, ok := r.types[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownType, name, r.names)
	}
	return t, nil
}

// Names lists the registered types in registration order.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// DecodeObject reads a sink object for Type.Parse: a JSON object whose
// "type" is typeName and whose other fields are all in allowed. Fields are
// checked in sorted order, so one bad object always reports the same field.
func DecodeObject(raw json.RawMessage, typeName string, allowed ...string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, &FieldError{Field: "sink", Message: "must be a JSON object"}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if name != "type" && !slices.Contains(allowed, name) {
			return nil, &FieldError{Field: "sink." + name, Message: unknownFieldMessage(typeName, allowed)}
		}
	}
	var typ string
	if err := json.Unmarshal(fields["type"], &typ); err != nil || typ != typeName {
		return nil, &FieldError{Field: "sink.type", Message: fmt.Sprintf("must be %q", typeName)}
	}
	return fields, nil
}

func unknownFieldMessage(typeName string, allowed []string) string {
	if len(allowed) == 0 {
		return fmt.Sprintf("unknown field; a %s sink has only type", typeName)
	}
	return fmt.Sprintf("unknown field; a %s sink has only type and %s", typeName, strings.Join(allowed, ", "))
}
