package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/testutil/history"
)

// historyEvents is the stored past the history benchmarks compare against
// an empty database: 2 million events with their ids, jobs and attempts
// over the seven days before now.
const historyEvents = 2_000_000

// BenchmarkIngestHistory is BenchmarkIngest with three matching
// subscriptions on an empty database and beside historyEvents of stored
// history: partitioning keeps the two within 10% (docs/benchmarks.md).
// Seeding the history takes about a minute.
func BenchmarkIngestHistory(b *testing.B) {
	for _, n := range []int{0, historyEvents} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			benchmarkIngest(b, unfiltered(3), func(e *env) { seedHistory(b, e, n) })
		})
	}
}

// seedHistory stores n past events of a tenant of their own
// (history.Seed).
func seedHistory(b *testing.B, e *env, n int) {
	b.Helper()
	ctx := context.Background()
	if err := e.store.EnsurePartitions(ctx, time.Now()); err != nil {
		b.Fatal(err)
	}
	if n == 0 {
		return
	}
	if err := history.Seed(ctx, e.store.Lifecycle, "t-history", n, time.Now()); err != nil {
		b.Fatal(err)
	}
}
