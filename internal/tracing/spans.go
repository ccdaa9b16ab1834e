package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Span names and attribute keys. Attributes name ids, the sink type and the
// destination key (credential-free by construction); never payloads,
// header values other than trace context, or secrets.
const (
	SpanIngestBatch = "ingest batch"
	SpanAttempt     = "delivery attempt"

	AttrSinkType       = attribute.Key("hubctl.sink.type")
	AttrDestination    = attribute.Key("hubctl.destination")
	AttrSubscriptionID = attribute.Key("hubctl.subscription.id")
	AttrTenantID       = attribute.Key("hubctl.tenant.id")
	AttrEventID        = attribute.Key("cloudevents.event_id")
	AttrDeliveryID     = attribute.Key("hubctl.delivery.id")
	AttrAttempt        = attribute.Key("hubctl.attempt")
	AttrOutcome        = attribute.Key("hubctl.outcome")
	AttrStatusCode     = attribute.Key("hubctl.status_code")

	AttrMessagingSystem = attribute.Key("messaging.system")
	AttrTopic           = attribute.Key("messaging.destination.name")
	AttrPartition       = attribute.Key("messaging.destination.partition.id")
	AttrBatchCount      = attribute.Key("messaging.batch.message_count")
	AttrAccepted        = attribute.Key("hubctl.ingest.accepted")
	AttrDiscarded       = attribute.Key("hubctl.ingest.discarded")
	AttrQuarantined     = attribute.Key("hubctl.ingest.quarantined")
)

// MaxBatchLinks bounds the links an ingest batch span carries to the trace
// contexts of its records: a batch of thousands would otherwise make one
// span larger than most collectors accept.
const MaxBatchLinks = 128

// Attempt is what an attempt span records about one delivery attempt.
type Attempt struct {
	SinkType       string
	Destination    string
	SubscriptionID string
	TenantID       string
	EventID        string
	DeliveryID     string
	Number         int // the attempt's number within its job's retry budget
	// TraceParent and TraceState are the event's trace context; the span
	// is its child when they are valid.
	TraceParent string
	TraceState  string
}

// StartAttempt starts the span of one delivery attempt, a child of the
// event's trace context (a root span when the event has none). The span
// in the returned context is what the attempt propagates to the
// destination (Headers).
func (t *Tracing) StartAttempt(ctx context.Context, a Attempt) (context.Context, trace.Span) {
	ctx = EventContext(ctx, a.TraceParent, a.TraceState)
	return t.tracer.Start(ctx, SpanAttempt,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			AttrSinkType.String(a.SinkType),
			AttrDestination.String(a.Destination),
			AttrSubscriptionID.String(a.SubscriptionID),
			AttrTenantID.String(a.TenantID),
			AttrEventID.String(a.EventID),
			AttrDeliveryID.String(a.DeliveryID),
			AttrAttempt.Int(a.Number),
		))
}

// EndAttempt records an attempt's outcome on its span and ends it. errText
// is the sink's own description of the failure, which never carries
// credentials or payload.
func EndAttempt(span trace.Span, outcome string, ok bool, statusCode int, errText string) {
	span.SetAttributes(AttrOutcome.String(outcome))
	if statusCode != 0 {
		span.SetAttributes(AttrStatusCode.Int(statusCode))
	}
	if !ok {
		span.SetStatus(codes.Error, errText)
	}
	span.End()
}

// Batch is what an ingest batch span records about one partition batch.
type Batch struct {
	Topic     string
	Partition int32
	Records   int
	// Links are the trace contexts of the batch's records that carry one,
	// at most MaxBatchLinks: a batch serves many traces, so it is linked
	// to them rather than a child of any.
	Links []trace.Link
}

// StartIngestBatch starts the span of one partition batch.
func (t *Tracing) StartIngestBatch(ctx context.Context, b Batch) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, SpanIngestBatch,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithLinks(b.Links...),
		trace.WithAttributes(
			AttrMessagingSystem.String("kafka"),
			AttrTopic.String(b.Topic),
			AttrPartition.Int(int(b.Partition)),
			AttrBatchCount.Int(b.Records),
		))
}

// Link is the link to an event's trace context, ok false when it has none.
func Link(traceParent, traceState string) (trace.Link, bool) {
	sc := trace.SpanContextFromContext(EventContext(context.Background(), traceParent, traceState))
	if !sc.IsValid() {
		return trace.Link{}, false
	}
	return trace.Link{SpanContext: sc}, true
}

// EndIngestBatch records what a stored batch did and ends its span; err is
// the failure that made the batch give up, nil when it was stored.
func EndIngestBatch(span trace.Span, accepted, discarded, quarantined int, err error) {
	span.SetAttributes(AttrAccepted.Int(accepted), AttrDiscarded.Int(discarded), AttrQuarantined.Int(quarantined))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
