package maintenance_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/history"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

const day = 24 * time.Hour

// BenchmarkPrune measures one prune of a day's partitions out of 2 million
// events of history (events, ids, jobs, attempts: about 285,000 rows each
// go), and ingest beside it: the batch write rate and its slowest batch
// during the prune against the same before it. A prune takes brief
// exclusive locks only, so ingest goes on (docs/benchmarks.md). One op is
// one prune; seeding the history takes about a minute. Run with
// -benchtime=1x.
func BenchmarkPrune(b *testing.B) {
	ctx := context.Background()
	st, err := storetest.Connect(ctx, pgtest.DSN(b), pg.Options{MaxConns: 8})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ('acme')`); err != nil {
		b.Fatal(err)
	}
	if err := history.Seed(ctx, st.Lifecycle, "history", 2_000_000, now); err != nil {
		b.Fatal(err)
	}
	// A day later, the oldest day of the history has expired.
	later := now.Add(day)
	policy := lifecycle.RetentionPolicy{Events: 7 * day, Deliveries: 7 * day, Quarantine: 7 * day}
	if err := st.EnsurePartitions(ctx, later); err != nil {
		b.Fatal(err)
	}

	ingest := newIngestLoad(b, st)
	baseline := ingest.measure(3 * time.Second)

	b.ResetTimer()
	var rep lifecycle.PruneReport
	during := ingest.during(func() {
		rep, err = st.Prune(ctx, later, policy, false)
	})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	var rows int64
	for _, r := range rep.Removals {
		rows += r.Rows
	}
	if rows < 1_000_000 {
		b.Fatalf("the prune removed %d rows, want the oldest day's (%+v)", rows, rep)
	}
	b.ReportMetric(float64(rows), "rows_removed")
	b.ReportMetric(during.elapsed.Seconds()*1000, "prune_ms")
	b.ReportMetric(baseline.rate(), "ingest_events/s_before")
	b.ReportMetric(during.rate(), "ingest_events/s_during")
	b.ReportMetric(float64(baseline.slowest.Milliseconds()), "slowest_batch_ms_before")
	b.ReportMetric(float64(during.slowest.Milliseconds()), "slowest_batch_ms_during")
}

// ingestLoad writes batches of 100 new 1 KiB events through
// WriteIngestBatch, one after another, as one partition's consumer does.
type ingestLoad struct {
	b      *testing.B
	st     *storetest.Store
	offset atomic.Int64
}

type loadRun struct {
	events  int
	elapsed time.Duration
	slowest time.Duration
}

func (r loadRun) rate() float64 { return float64(r.events) / r.elapsed.Seconds() }

func newIngestLoad(b *testing.B, st *storetest.Store) *ingestLoad { return &ingestLoad{b: b, st: st} }

func (l *ingestLoad) batch() queue.IngestBatch {
	payload := make([]byte, 1024)
	start := l.offset.Add(100) - 100
	records := make([]queue.IngestRecord, 100)
	for i := range records {
		id := uuid.Must(uuid.NewV7()).String()
		headers := benchHeaders("acme", id)
		ev, v, ok := event.Parse(headers, payload, event.Options{})
		if !ok {
			l.b.Fatalf("benchmark event does not parse: %v", v)
		}
		records[i] = queue.IngestRecord{Offset: start + int64(i), Headers: headers, Value: payload, Verdict: event.Accepted(), Event: ev}
	}
	return queue.IngestBatch{Group: "streaming-hub", Topic: "lerian.streaming.bench", Partition: 0, Records: records, NextOffset: start + 100, Route: routeNewEvents}
}

// run writes batches until stop is closed.
func (l *ingestLoad) run(stop <-chan struct{}) loadRun {
	var r loadRun
	began := time.Now()
	for {
		select {
		case <-stop:
			r.elapsed = time.Since(began)
			return r
		default:
		}
		b := l.batch()
		t := time.Now()
		if _, err := l.st.WriteIngestBatch(context.Background(), b); err != nil {
			l.b.Error(err)
			r.elapsed = time.Since(began)
			return r
		}
		r.slowest = max(r.slowest, time.Since(t))
		r.events += len(b.Records)
	}
}

func (l *ingestLoad) measure(d time.Duration) loadRun {
	stop := make(chan struct{})
	time.AfterFunc(d, func() { close(stop) })
	return l.run(stop)
}

// during runs fn while the load runs and returns the load over fn's time.
func (l *ingestLoad) during(fn func()) loadRun {
	stop := make(chan struct{})
	var r loadRun
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r = l.run(stop) }()
	fn()
	close(stop)
	wg.Wait()
	return r
}

// benchHeaders are the headers of a well-formed CloudEvent.
func benchHeaders(tenant, id string) []event.Header {
	h := func(k, v string) event.Header { return event.Header{Key: k, Value: []byte(v)} }
	return []event.Header{
		h("ce-specversion", "1.0"), h("ce-id", id), h("ce-source", "midaz"),
		h("ce-type", "studio.lerian.transaction.posted"), h("ce-time", "2026-11-29T12:00:00Z"),
		h("ce-schemaversion", "1.0.0"), h("ce-resourcetype", "transaction"), h("ce-eventtype", "posted"),
		h("ce-tenantid", tenant),
	}
}

// routeNewEvents is the router ingest passes, without filter limits.
var routeNewEvents = match.Router(match.FilterLimits{})
