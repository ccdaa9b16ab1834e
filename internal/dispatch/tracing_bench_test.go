package dispatch

import (
	"context"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/otlptest"
)

// benchTraceParent is the producer's trace context every benchmark event
// carries, so both variants propagate one and only the span differs.
const benchTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// BenchmarkDispatchTracing is BenchmarkDispatch (claim batch 64) with
// tracing off and on. On, every attempt makes a span exported over
// OTLP/HTTP to a real receiver in the process (batching exporter, as
// serve configures it from OTEL_EXPORTER_OTLP_ENDPOINT). Compare the two
// deliveries/s and go_cpu_µs/delivery; run with -benchtime=20000x.
func BenchmarkDispatchTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "tracing=off"
		if on {
			name = "tracing=on"
		}
		b.Run(name, func(b *testing.B) {
			benchmarkDispatch(b, 64, func(e *env, o *Options) {
				if _, err := e.store.Pool.Exec(context.Background(), `UPDATE events SET traceparent = $1`, benchTraceParent); err != nil {
					b.Fatal(err)
				}
				if on {
					o.Tracing, _ = otlptest.StartTracing(b)
				}
			})
		})
	}
}
