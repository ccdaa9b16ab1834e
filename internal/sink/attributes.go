package sink

import "time"

// The names under which message-oriented sinks (SQS message attributes,
// AMQP and NATS headers, Kafka record headers, S3 metadata, Pub/Sub
// attributes) carry what a webhook sends as X-Lerian-* headers
// (docs/consuming.md), lowercased the way message consumers conventionally
// spell attributes, and the W3C trace context under the names W3C and
// OpenTelemetry's messaging instrumentation read. Declared once so that
// every sink spells them alike.
const (
	AttrEventID       = "lerian-event-id"
	AttrEventType     = "lerian-event-type"
	AttrTenantID      = "lerian-tenant-id"
	AttrDeliveryID    = "lerian-delivery-id"
	AttrSchemaVersion = "lerian-schema-version"
	AttrTraceParent   = "traceparent"
	AttrTraceState    = "tracestate"
)

// CloudEventsSpecVersion is the CloudEvents version of the specversion
// attribute the binary-mode sinks send.
const CloudEventsSpecVersion = "1.0"

// Attribute is one name and value a sink carries beside the event data.
type Attribute struct {
	Name, Value string
}

// Attributes are the lerian-* values of d and its trace context, in a
// fixed order, leaving out those d has no value for: an absent attribute
// tells a consumer what an empty one would, and some destinations (SQS)
// refuse empty values.
func Attributes(d Delivery) []Attribute {
	return nonEmpty(
		Attribute{AttrEventID, d.EventID},
		Attribute{AttrEventType, d.EventKey},
		Attribute{AttrTenantID, d.TenantID},
		Attribute{AttrDeliveryID, d.DeliveryID},
		Attribute{AttrSchemaVersion, d.SchemaVersion},
		Attribute{AttrTraceParent, d.TraceParent},
		Attribute{AttrTraceState, d.TraceState},
	)
}

// CloudEventsAttributes are d's CloudEvents context attributes for a
// binary-mode protocol binding, under their bare CloudEvents names
// (specversion, id, source, type, time, subject, dataschema), leaving out
// the optional ones d has no value for. Each binding adds its own prefix
// (ce- for NATS and Pub/Sub, ce_ for Kafka); the data content type travels
// apart, as each binding's content-type (Delivery.ContentType).
func CloudEventsAttributes(d Delivery) []Attribute {
	var at string
	if !d.Time.IsZero() {
		at = d.Time.UTC().Format(time.RFC3339Nano)
	}
	return nonEmpty(
		Attribute{"specversion", CloudEventsSpecVersion},
		Attribute{"id", d.EventID},
		Attribute{"source", d.Source},
		Attribute{"type", d.Type},
		Attribute{"time", at},
		Attribute{"subject", d.Subject},
		Attribute{"dataschema", d.DataSchema},
	)
}

// ContentType is the media type of d's data: its datacontenttype, or
// application/json when the event named none (CloudEvents' default for
// JSON events).
func (d Delivery) ContentType() string {
	if d.DataContentType == "" {
		return "application/json"
	}
	return d.DataContentType
}

func nonEmpty(attrs ...Attribute) []Attribute {
	kept := attrs[:0]
	for _, a := range attrs {
		if a.Value != "" {
			kept = append(kept, a)
		}
	}
	return kept
}
