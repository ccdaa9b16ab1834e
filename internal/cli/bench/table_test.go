package bench

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/benchmark"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/output"
)

func TestTableSaysWhatIsUnavailable(t *testing.T) {
	hub, peak, walPer := 177.0, 96.0, 3676.4
	tests := []struct {
		name string
		r    benchmark.Result
		want []string
	}{
		{
			name: "every figure",
			r: benchmark.Result{Events: 10, Delivered: 10, SizeBytes: 1024, ElapsedSeconds: 0.5, DeliveriesPerSecond: 20,
				Latency: &benchmark.Latency{P50: 1, P95: 2, P99: 3, Max: 4},
				Bare:    benchmark.Bare{Requests: 10, Workers: 8, RequestsPerSecond: 40}, Ratio: 0.5,
				CPU: benchmark.CPU{HubMicros: &hub}, Memory: benchmark.Memory{HubPeakRSSMiB: &peak},
				WAL: benchmark.WAL{BytesPerDelivery: &walPer}},
			want: []string{"10 of 1024 bytes", "20 deliveries/s", "latency p99     3.0 ms", "40 requests/s (10 requests, 8 workers)",
				"hub / bare      0.50", "hub CPU         177 µs/delivery", "PostgreSQL CPU  unavailable", "hub peak RSS    96 MiB",
				"PostgreSQL WAL  3676 bytes/delivery"},
		},
		{
			name: "timed out, no latency, no CPU",
			r:    benchmark.Result{Events: 10, Delivered: 3, Duplicates: 1, TimedOut: true},
			want: []string{"3 (timed out), 1 redelivered", "latency         unavailable", "hub CPU         unavailable", "hub peak RSS    unavailable",
				"PostgreSQL WAL  unavailable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			if err := output.New(ios, output.Table).Print(tt.r, table(tt.r)); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
