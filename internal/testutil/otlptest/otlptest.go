// Package otlptest is an OTLP/HTTP trace receiver for tests: a loopback
// HTTP server that decodes the protobuf requests an OpenTelemetry exporter
// sends to /v1/traces, the way a collector would, and keeps the spans.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hubctl/hubctl/internal/tracing"
)

// Receiver collects the spans exported to it.
type Receiver struct {
	server *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	received chan struct{}
}

// Span is one received span with its ids in hex, as W3C headers spell them.
type Span struct {
	Name         string
	TraceID      string
	SpanID       string
	ParentSpanID string // "" for a root span
	Kind         tracepb.Span_SpanKind
	Attributes   map[string]string
	Links        []Link
	StatusError  bool
	Service      string // the resource's service.name
}

// Link is a span link, ids in hex.
type Link struct{ TraceID, SpanID string }

// Start runs a receiver until the test ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{received: make(chan struct{}, 1)}
	r.server = httptest.NewServer(http.HandlerFunc(r.handle))
	t.Cleanup(r.server.Close)
	return r
}

// Endpoint is the base URL for OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) Endpoint() string { return r.server.URL }

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "only POST /v1/traces", http.StatusNotFound)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "content type "+ct+", want application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var export collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &export); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	var spans []Span
	for _, rs := range export.GetResourceSpans() {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				span := Span{
					Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Kind: s.GetKind(),
					Attributes: attributes(s.GetAttributes()), StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
					Service: service,
				}
				for _, l := range s.GetLinks() {
					span.Links = append(span.Links, Link{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
				}
				spans = append(spans, span)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, spans...)
	r.requests++
	r.mu.Unlock()
	select {
	case r.received <- struct{}{}:
	default:
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// attributes renders key-values as strings: strings as they are, other
// values in their protobuf text form.
func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = strconv.FormatBool(x.BoolValue)
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}

// Spans returns every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor polls until match holds for the received spans or patience runs
// out, and returns the spans it matched on.
func (r *Receiver) WaitFor(t testing.TB, what string, patience time.Duration, match func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		spans := r.Spans()
		if match(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s among %d spans received within %s", what, len(spans), patience)
		}
		select {
		case <-r.received:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StartTracing starts a receiver and the hub's tracing pointed at it the
// way a deployment configures it (OTEL_EXPORTER_OTLP_ENDPOINT, batching
// exporter), shut down when the test ends.
func StartTracing(t testing.TB) (*tracing.Tracing, *Receiver) {
	t.Helper()
	r := Start(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.Endpoint()}
	tr, err := tracing.Setup(context.Background(), func(k string) string { return env[k] }, "test")
	if err != nil || tr == nil {
		t.Fatalf("tracing: %v", err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, r
}
