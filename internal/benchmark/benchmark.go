// Package benchmark is the arithmetic of hubctl bench (docs/benchmarks.md,
// hubctl bench): percentiles of the produce→delivered latencies, rates, the
// hub-to-bare-loop ratio, CPU per delivery from /proc figures, and the
// result the command prints. It does no I/O.
package benchmark

import (
	"math"
	"slices"
	"time"
)

// Result is one run of hubctl bench, as -o json prints it.
type Result struct {
	// Events is how many events were produced, Delivered how many distinct
	// ones reached the receiver (redeliveries counted in Duplicates).
	Events     int `json:"events"`
	Delivered  int `json:"delivered"`
	Duplicates int `json:"duplicates"`
	// Rejected is how many requests failed the receiver's signature check.
	Rejected  int `json:"rejected"`
	SizeBytes int `json:"size_bytes"`
	// RateLimit is --rate, 0 for as fast as possible.
	RateLimit float64 `json:"rate_limit"`
	// LingerMS is --linger: how long the producer waited for more records
	// of a partition before sending them.
	LingerMS float64 `json:"linger_ms"`
	// TimedOut is whether --timeout ended the run before every event was
	// delivered.
	TimedOut bool `json:"timed_out"`
	// ElapsedSeconds runs from the first event produced to the last
	// delivered.
	ElapsedSeconds      float64 `json:"elapsed_seconds"`
	DeliveriesPerSecond float64 `json:"deliveries_per_second"`
	// Latency is nil when the receiver is not the bench's own (--url).
	Latency *Latency `json:"latency_ms"`
	// LatencyFromAck is the same deliveries timed from the broker's
	// acknowledgement of the produce instead of the produce call: the
	// hub's part alone, without the producer's batching wait (LingerMS)
	// or the broker's write. Nil when Latency is.
	LatencyFromAck *Latency `json:"latency_from_ack_ms"`
	Bare           Bare     `json:"bare"`
	// Ratio is DeliveriesPerSecond over the bare loop's rate.
	Ratio  float64 `json:"ratio"`
	CPU    CPU     `json:"cpu"`
	Memory Memory  `json:"memory"`
	WAL    WAL     `json:"wal"`
}

// Memory is the hub process's memory; nil where it could not be read.
type Memory struct {
	// HubPeakRSSMiB is the most resident memory the hub has held since it
	// started (VmHWM), read when the run ends.
	HubPeakRSSMiB *float64 `json:"hub_peak_rss_mib"`
}

// Latency is produce→delivered (or acknowledged→delivered) in
// milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Bare is the baseline: signed POSTs of the same size straight to the
// receiver, from Workers goroutines.
type Bare struct {
	Requests          int     `json:"requests"`
	Workers           int     `json:"workers"`
	ElapsedSeconds    float64 `json:"elapsed_seconds"`
	RequestsPerSecond float64 `json:"requests_per_second"`
}

// CPU is CPU time per delivery in microseconds; nil where it could not be
// read.
type CPU struct {
	HubMicros      *float64 `json:"hub_us_per_delivery"`
	PostgresMicros *float64 `json:"postgres_us_per_delivery"`
}

// Summarize is the percentiles of latencies (nearest rank); nil for none.
// It sorts latencies.
func Summarize(latencies []time.Duration) *Latency {
	if len(latencies) == 0 {
		return nil
	}
	slices.Sort(latencies)
	return &Latency{
		P50: millis(Percentile(latencies, 50)),
		P95: millis(Percentile(latencies, 95)),
		P99: millis(Percentile(latencies, 99)),
		Max: millis(latencies[len(latencies)-1]),
	}
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted:
// the smallest value at least p% of the values are at or below. 0 for an
// empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Rate is n per second of elapsed; 0 when no time passed.
func Rate(n int, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / elapsed.Seconds()
}

// Ratio is hub over bare; 0 when the bare rate is unknown.
func Ratio(hub, bare float64) float64 {
	if bare <= 0 {
		return 0
	}
	return hub / bare
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
