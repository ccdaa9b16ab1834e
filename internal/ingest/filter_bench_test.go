package ingest

import (
	"fmt"
	"testing"
)

// BenchmarkIngestFiltered is BenchmarkIngest with 100 subscriptions on the
// tenant, each with a content filter, against 100 without: the difference
// in ns/op is the cost of filtering one event 100 times (each payload is
// parsed once for all of them). Every fifth subscription's filter lets the
// measured events through (20 jobs per event); the warm-up event, whose
// data is {}, fails the data filters and passes the attribute ones.
//
//   - none: no filter, 100 jobs per event, the baseline.
//   - attributes: `type == "<key>" && tenant_id == ... && source != ...`
//     filters over attributes alone, which never parse the payload.
//   - data: `data.amount > <threshold>` over the 1 KiB JSON payload.
//
// Run with -benchtime=20000x on a quiet machine and report ns/op per
// variant; the cost per event is data's ns/op minus none's, less the
// 80 jobs per event the filters saved.
func BenchmarkIngestFiltered(b *testing.B) {
	const subscriptions = 100
	b.Run("filters=none", func(b *testing.B) { benchmarkIngest(b, unfiltered(subscriptions), nil) })
	b.Run("filters=attributes", func(b *testing.B) {
		filters := make([]string, subscriptions)
		for i := range filters {
			key := "transaction.posted"
			if i%5 != 0 {
				key = "account.created" // no event has it
			}
			filters[i] = fmt.Sprintf(`type == %q && tenant_id == "t-bench" && source != "nowhere-%d"`, key, i)
		}
		benchmarkIngest(b, benchSubscriptions{filters: filters, jobs: func(n int) int64 { return int64(n+1) * subscriptions / 5 }}, nil)
	})
	b.Run("filters=data", func(b *testing.B) {
		filters := make([]string, subscriptions)
		for i := range filters {
			threshold := 999 // the payload's amount is 1000
			if i%5 != 0 {
				threshold = 1000 + i
			}
			filters[i] = fmt.Sprintf(`data.amount > %d && has(data.transaction_id)`, threshold)
		}
		benchmarkIngest(b, benchSubscriptions{filters: filters, jobs: func(n int) int64 { return int64(n) * subscriptions / 5 }}, nil)
	})
}
