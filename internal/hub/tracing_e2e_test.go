package hub_test

// Trace context end to end: a producer's plain W3C traceparent (as
// OpenTelemetry's Kafka instrumentation writes it) through ingest and the
// delivery attempt to the webhook receiver. With tracing on, the spans are
// read back from a real OTLP/HTTP receiver (protobuf decoded as a collector
// would); with tracing off, the header reaches the receiver verbatim.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/testutil/otlptest"
)

const (
	producerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	producerSpanID  = "00f067aa0ba902b7"
	producerParent  = "00-" + producerTraceID + "-" + producerSpanID + "-01"
	producerState   = "vendor=opaque-42"
	tracedData      = `{"amount":42,"note":"trace me"}`
)

// traceHeaders is what a webhook receiver saw of one delivery.
type traceHeaders struct{ traceparent, tracestate, deliveryID string }

// webhookRecorder answers every request 200 and keeps the trace headers of
// deliveries (not of the verification probe).
type webhookRecorder struct {
	server *httptest.Server
	mu     sync.Mutex
	got    []traceHeaders
}

func newWebhookRecorder(t *testing.T) *webhookRecorder {
	w := &webhookRecorder{}
	w.server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Lerian-Event-Type") != "hub.verification" {
			w.mu.Lock()
			w.got = append(w.got, traceHeaders{r.Header.Get("traceparent"), r.Header.Get("tracestate"), r.Header.Get("X-Lerian-Delivery-Id")})
			w.mu.Unlock()
		}
		rw.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(w.server.Close)
	return w
}

func (w *webhookRecorder) deliveries() []traceHeaders {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]traceHeaders(nil), w.got...)
}

// produceTraced publishes one event of the tenant carrying the producer's
// trace context as plain headers, and returns its id.
func (h *hubSession) produceTraced(eventKey string) string {
	h.t.Helper()
	id := uuid.Must(uuid.NewV7()).String()
	resource, eventType, _ := strings.Cut(eventKey, ".")
	headers := map[string]string{
		"ce-specversion": "1.0", "ce-id": id, "ce-source": "midaz", "ce-type": "studio.lerian.midaz." + eventKey,
		"ce-time": time.Now().UTC().Format(time.RFC3339Nano), "ce-schemaversion": e2eSchemaVersion,
		"ce-resourcetype": resource, "ce-eventtype": eventType, "ce-tenantid": e2eTenant,
		"content-type": "application/json",
		"traceparent":  producerParent, "tracestate": producerState,
	}
	rec := &kgo.Record{Topic: topicOf(eventKey), Value: []byte(tracedData)}
	for k, v := range headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	h.kafka.Produce(h.t, ctx, rec.Topic, rec)
	return id
}

func TestTraceFromProducerToWebhookWithTracingOn(t *testing.T) {
	receiver := otlptest.Start(t)
	hook := newWebhookRecorder(t)
	h := startHubWith(t, map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.Endpoint(),
		"OTEL_SERVICE_NAME":           "hubctl-e2e",
		"OTEL_BSP_SCHEDULE_DELAY":     "100", // milliseconds: export soon after each span ends
	}, postedKey)
	sub := h.subscribe(subscription("traced", map[string]any{"type": "webhook", "url": hook.server.URL + "/hooks"}, []string{postedKey}, nil))
	eventID := h.produceTraced(postedKey)
	deliveryID := succeeded(t, h.settled(sub, 1), eventID, postedKey)

	got := hook.deliveries()
	if len(got) != 1 {
		t.Fatalf("webhook received %d deliveries, want 1: %+v", len(got), got)
	}
	sent := got[0]
	if sent.deliveryID != deliveryID {
		t.Fatalf("webhook saw delivery %s, the hub recorded %s", sent.deliveryID, deliveryID)
	}
	parts := strings.Split(sent.traceparent, "-")
	if len(parts) != 4 || parts[0] != "00" || parts[1] != producerTraceID || parts[2] == producerSpanID || parts[3] != "01" {
		t.Fatalf("webhook traceparent %q: want the producer's trace %s with the attempt span's id, sampled", sent.traceparent, producerTraceID)
	}
	if sent.tracestate != producerState {
		t.Errorf("webhook tracestate %q, want the producer's %q carried on", sent.tracestate, producerState)
	}
	attemptSpanID := parts[2]

	spans := receiver.WaitFor(t, "attempt and ingest batch spans", patience, func(spans []otlptest.Span) bool {
		return findSpan(spans, "delivery attempt", attemptSpanID) != nil && findSpan(spans, "ingest batch", "") != nil
	})
	attempt := findSpan(spans, "delivery attempt", attemptSpanID)
	if attempt.TraceID != producerTraceID || attempt.ParentSpanID != producerSpanID {
		t.Errorf("attempt span in trace %s under parent %s; want trace %s under the producer's span %s",
			attempt.TraceID, attempt.ParentSpanID, producerTraceID, producerSpanID)
	}
	for key, want := range map[string]string{
		"hubctl.sink.type": "webhook", "hubctl.destination": strings.TrimSuffix(hook.server.URL, "/"),
		"hubctl.subscription.id": sub.ID, "hubctl.tenant.id": e2eTenant, "cloudevents.event_id": eventID,
		"hubctl.delivery.id": deliveryID, "hubctl.outcome": "succeeded", "hubctl.status_code": "200", "hubctl.attempt": "1",
	} {
		if got := attempt.Attributes[key]; got != want {
			t.Errorf("attempt span %s = %q, want %q", key, got, want)
		}
	}
	if attempt.Service != "hubctl-e2e" {
		t.Errorf("spans come from service %q, want OTEL_SERVICE_NAME's hubctl-e2e", attempt.Service)
	}

	batch := findSpan(spans, "ingest batch", "")
	linked := false
	for _, l := range batch.Links {
		linked = linked || l.TraceID == producerTraceID && l.SpanID == producerSpanID
	}
	if !linked {
		t.Errorf("ingest batch span links %+v; want a link to the producer's span %s of trace %s", batch.Links, producerSpanID, producerTraceID)
	}
	if batch.Attributes["messaging.destination.name"] != topicOf(postedKey) || batch.Attributes["hubctl.ingest.accepted"] != "1" {
		t.Errorf("ingest batch span attributes %v; want the topic %s and 1 accepted", batch.Attributes, topicOf(postedKey))
	}
	for _, s := range spans {
		for key, v := range s.Attributes {
			if strings.Contains(v, "trace me") || strings.Contains(v, sub.SigningSecret) && sub.SigningSecret != "" {
				t.Errorf("span %s attribute %s carries the payload or the signing secret: %q", s.Name, key, v)
			}
		}
	}
}

func TestPlainTraceparentDeliveredVerbatimWithTracingOff(t *testing.T) {
	hook := newWebhookRecorder(t)
	h := startHub(t, postedKey)
	sub := h.subscribe(subscription("plain", map[string]any{"type": "webhook", "url": hook.server.URL + "/hooks"}, []string{postedKey}, nil))
	eventID := h.produceTraced(postedKey)
	succeeded(t, h.settled(sub, 1), eventID, postedKey)

	got := hook.deliveries()
	if len(got) != 1 || got[0].traceparent != producerParent || got[0].tracestate != producerState {
		t.Fatalf("webhook received %+v; want one delivery with the producer's traceparent %q and tracestate %q verbatim",
			got, producerParent, producerState)
	}
}

// findSpan is the span named name with spanID ("" for any), or nil.
func findSpan(spans []otlptest.Span, name, spanID string) *otlptest.Span {
	for i := range spans {
		if spans[i].Name == name && (spanID == "" || spans[i].SpanID == spanID) {
			return &spans[i]
		}
	}
	return nil
}
