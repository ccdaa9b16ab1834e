// Package pull is the sink type of pull subscriptions (docs/consuming.md, Pulling events): events are
// held on the subscription's cursor and read with GET /v1/events, so there is
// no destination to configure, probe or push to.
package pull

import (
	"context"
	"encoding/json"

	"github.com/hubctl/hubctl/internal/sink"
)

// Name is the sink.type of pull subscriptions.
const Name = "pull"

// Destination is the circuit-breaker key of every pull sink. Dispatch never
// attempts one, so the key only has to be stable and free of credentials.
const Destination = "pull"

// errNotPushed is what Deliver reports: dispatch creates no jobs for pull
// subscriptions (docs/concepts.md, Dispatch), so reaching it is a routing mistake upstream.
const errNotPushed = "pull subscriptions are read with GET /v1/events, not pushed"

// Type is the pull sink type. It holds no state.
type Type struct{}

var _ sink.Type = Type{}

// NewType returns the pull sink type.
func NewType() Type { return Type{} }

// Name returns "pull".
func (Type) Name() string { return Name }

// Parse accepts exactly {"type":"pull"}; any other field is a *sink.FieldError.
func (Type) Parse(raw json.RawMessage) (sink.Config, error) {
	if _, err := sink.DecodeObject(raw, Name); err != nil {
		return sink.Config{}, err
	}
	return sink.Config{Public: json.RawMessage(`{}`), Destination: Destination}, nil
}

// Open returns the pull sink; a pull subscription has no signing secret and
// the ones given, if any, are ignored.
func (Type) Open(sink.Config, []string) (sink.Sink, error) { return pullSink{}, nil }

type pullSink struct{}

// Deliver makes no attempt and reports why.
func (pullSink) Deliver(context.Context, sink.Delivery) sink.Outcome {
	return sink.Outcome{Error: errNotPushed}
}

// Probe succeeds: the hub itself holds what a pull subscriber reads (docs/concepts.md, Verification).
func (pullSink) Probe(context.Context, sink.ProbeRequest) error { return nil }

// Close has nothing to release.
func (pullSink) Close() error { return nil }
