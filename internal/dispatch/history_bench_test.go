package dispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/testutil/history"
)

// historyEvents is the stored past the history benchmarks compare against
// an empty database: 2 million events with their ids, succeeded jobs and
// attempts over the seven days before now.
const historyEvents = 2_000_000

// BenchmarkDispatchHistory is BenchmarkDispatch (claim batch 64) on an
// empty database and beside historyEvents of stored history: claims read
// the live partition only, so the two stay within 10%
// (docs/benchmarks.md). Seeding the history takes about a minute; run it
// with a fixed count, e.g. -benchtime=20000x.
func BenchmarkDispatchHistory(b *testing.B) {
	for _, n := range []int{0, historyEvents} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			benchmarkDispatch(b, 64, func(e *env) {
				ctx := context.Background()
				if err := e.store.EnsurePartitions(ctx, time.Now()); err != nil {
					b.Fatal(err)
				}
				if n == 0 {
					return
				}
				if err := history.Seed(ctx, e.store.Lifecycle, "history", n, time.Now()); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
