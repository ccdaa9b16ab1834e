package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestEnabled(t *testing.T) {
	cases := []struct {
		vars map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "hub"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
	}
	for _, c := range cases {
		if got := Enabled(env(c.vars)); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.vars, got, c.want)
		}
	}
}

func TestSetupOffReturnsNil(t *testing.T) {
	tr, err := Setup(context.Background(), env(nil), "test")
	if err != nil || tr != nil {
		t.Fatalf("Setup with no OTEL_* = %v, %v; want nil, nil (tracing off)", tr, err)
	}
	// Every method is safe on tracing off.
	if tr.Tracer() != nil || tr.Shutdown(context.Background()) != nil || tr.ForceFlush(context.Background()) != nil {
		t.Fatal("a nil Tracing is not a no-op")
	}
}

func TestSetupRefusesWhatItCannotExport(t *testing.T) {
	base := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
	cases := map[string]string{
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc":        "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc": "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc is not supported",
		"OTEL_TRACES_EXPORTER=zipkin":             "OTEL_TRACES_EXPORTER=zipkin is not supported",
		"OTEL_EXPORTER_OTLP_ENDPOINT=collector":   "OTEL_EXPORTER_OTLP_ENDPOINT=collector is not an http(s) URL",
		"OTEL_EXPORTER_OTLP_TIMEOUT=soon":         "OTEL_EXPORTER_OTLP_TIMEOUT=soon must be a positive number of milliseconds",
		"OTEL_EXPORTER_OTLP_HEADERS=novalue":      `OTEL_EXPORTER_OTLP_HEADERS: header "novalue" is not key=value`,
		"OTEL_TRACES_SAMPLER=sometimes":           "OTEL_TRACES_SAMPLER=sometimes is not one of",
		"OTEL_BSP_SCHEDULE_DELAY=-1":              "OTEL_BSP_SCHEDULE_DELAY=-1 must be a positive integer",
	}
	for setting, want := range cases {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		name, value, _ := strings.Cut(setting, "=")
		vars[name] = value
		tr, err := Setup(context.Background(), env(vars), "test")
		if err == nil {
			_ = tr.Shutdown(context.Background())
			t.Errorf("%s: Setup succeeded", setting)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q, want it to contain %q", setting, err, want)
		}
	}
}

func TestHeadersFollowTheSpan(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := EventContext(context.Background(), parent, "k=v")
	if tp, ts := Headers(ctx); tp != parent || ts != "k=v" {
		t.Fatalf("Headers of the event context = %q, %q; want the event's own", tp, ts)
	}
	if tp, _ := Headers(EventContext(context.Background(), "garbage", "")); tp != "" {
		t.Fatalf("an invalid traceparent propagated as %q", tp)
	}
	tr := New()
	defer tr.Shutdown(context.Background())
	spanCtx, span := tr.StartAttempt(context.Background(), Attempt{TraceParent: parent, TraceState: "k=v"})
	defer span.End()
	sc := trace.SpanContextFromContext(spanCtx)
	tp, ts := Headers(spanCtx)
	if tp != "00-4bf92f3577b34da6a3ce929d0e0e4736-"+sc.SpanID().String()+"-01" || ts != "k=v" {
		t.Fatalf("attempt headers %q, %q; want the event's trace with the attempt span %s", tp, ts, sc.SpanID())
	}
}
