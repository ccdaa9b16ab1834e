// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables and holds the hub's span conventions. Tracing is
// off unless an OTLP endpoint is configured; off, Setup returns a nil
// *Tracing and the hub's hot paths skip every tracing call, so tracing off
// costs nothing.
package tracing

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is service.name unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES says otherwise.
const ServiceName = "hubctl"

// instrumentation names the hub's tracer (the instrumentation scope).
const instrumentation = "github.com/hubctl/hubctl"

// Tracing is a configured tracer provider. A nil *Tracing is tracing off:
// every method is safe on it.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// Enabled reports whether the environment turns tracing on: an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp, and
// neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exporter {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup builds the tracer provider the environment asks for, or returns
// nil when tracing is off. The exporter, its endpoint, headers, timeout,
// compression and TLS, the batch processor, the sampler and the resource
// all read their standard OTEL_* variables. Only the OTLP exporter over
// HTTP (http/protobuf) is built in; a configuration asking for another
// exporter or protocol stops start-up with one line naming the variable.
func Setup(ctx context.Context, getenv func(string) string, version string) (*Tracing, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	if err := checkExporter(getenv); err != nil {
		return nil, err
	}
	exporterOpts, err := exporterOptions(getenv)
	if err != nil {
		return nil, err
	}
	exporter, err := otlptracehttp.New(ctx, exporterOpts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := newResource(getenv, version)
	if err != nil {
		return nil, err
	}
	sample, err := sampler(getenv)
	if err != nil {
		return nil, err
	}
	batching, err := batchOptions(getenv)
	if err != nil {
		return nil, err
	}
	return New(sdktrace.WithBatcher(exporter, batching...), sdktrace.WithResource(res), sdktrace.WithSampler(sample)), nil
}

// New builds a Tracing from tracer provider options: Setup's own, or a
// test's or benchmark's (a synchronous exporter, another sampler).
func New(opts ...sdktrace.TracerProviderOption) *Tracing {
	provider := sdktrace.NewTracerProvider(opts...)
	return &Tracing{provider: provider, tracer: provider.Tracer(instrumentation)}
}

// checkExporter refuses what this build cannot export to, so that a
// deployment asking for gRPC learns it at start-up rather than losing
// every span.
func checkExporter(getenv func(string) string) error {
	for _, name := range []string{"OTEL_TRACES_EXPORTER"} {
		if v := strings.ToLower(strings.TrimSpace(getenv(name))); v != "" && v != "otlp" {
			return fmt.Errorf("%s=%s is not supported: hubctl exports traces with otlp only", name, getenv(name))
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		v := strings.ToLower(strings.TrimSpace(getenv(name)))
		if v == "" {
			continue
		}
		if v != "http/protobuf" {
			return fmt.Errorf("%s=%s is not supported: hubctl exports OTLP over http/protobuf (port 4318 on a collector)", name, getenv(name))
		}
		return nil // the more specific variable decides
	}
	return nil
}

// Tracer is the hub's tracer; nil when tracing is off.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}

// Shutdown flushes the spans still buffered and stops exporting.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// ForceFlush exports the spans still buffered.
func (t *Tracing) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

// w3c is the W3C Trace Context propagator: events carry their context as
// traceparent/tracestate, and deliveries send it on the same way.
var w3c = propagation.TraceContext{}

// EventContext returns ctx carrying the remote span context of an event's
// traceparent and tracestate; ctx unchanged when it has none or it is not
// valid W3C.
func EventContext(ctx context.Context, traceParent, traceState string) context.Context {
	if traceParent == "" {
		return ctx
	}
	return w3c.Extract(ctx, &headerCarrier{traceparent: traceParent, tracestate: traceState})
}

// Headers are the traceparent and tracestate of the span in ctx, as a
// destination receives them ("" when ctx has no valid span).
func Headers(ctx context.Context) (traceParent, traceState string) {
	var c headerCarrier
	w3c.Inject(ctx, &c)
	return c.traceparent, c.tracestate
}

// headerCarrier holds the two W3C headers without a map.
type headerCarrier struct{ traceparent, tracestate string }

func (c *headerCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}

func (c *headerCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.traceparent = value
	case "tracestate":
		c.tracestate = value
	}
}

func (c *headerCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }
