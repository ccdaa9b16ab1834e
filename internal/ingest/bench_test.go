package ingest

import (
	"bytes"
	"cmp"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/testutil/otlptest"
)

// BenchmarkIngest measures records/s from Kafka into the inbox: 1 KiB events
// of one tenant spread over three partitions, with no subscription and with
// three subscriptions that match every event (three delivery jobs each).
//
// One op is one event. The consumer has joined and stored a first record
// before the clock starts; the b.N records are produced while its fetching is
// paused, so the figure is ingest alone: poll, verdicts, the batch
// transactions and the Kafka commits, against whatever PostgreSQL pgtest
// uses: its durability settings are part of the figure.
func BenchmarkIngest(b *testing.B) {
	for _, subscriptions := range []int{0, 3} {
		b.Run(fmt.Sprintf("subscriptions=%d", subscriptions), func(b *testing.B) {
			benchmarkIngest(b, unfiltered(subscriptions), nil)
		})
	}
}

// BenchmarkIngestPartitions is BenchmarkIngest (three subscriptions) with
// the events on one partition and on three: each partition's batches are
// written in transactions of their own, committing independently, so the
// rate should grow with the partitions until PostgreSQL's cores are busy.
func BenchmarkIngestPartitions(b *testing.B) {
	for _, partitions := range []int{1, testPartitions} {
		b.Run(fmt.Sprintf("partitions=%d", partitions), func(b *testing.B) {
			subs := unfiltered(3)
			subs.partitions = partitions
			benchmarkIngest(b, subs, nil)
		})
	}
}

// benchSubscriptions are the subscriptions of one ingest benchmark: one per
// filter ("" for none), and how many delivery jobs the warm-up event and
// the b.N measured events must have made between them.
type benchSubscriptions struct {
	filters []string
	jobs    func(n int) int64
	// partitions is how many of the topic's partitions the events are
	// spread over; 0 means all of them.
	partitions int
}

// unfiltered is n subscriptions without filters: a job per event each.
func unfiltered(n int) benchSubscriptions {
	return benchSubscriptions{filters: make([]string, n), jobs: func(events int) int64 { return int64((events + 1) * n) }}
}

// benchmarkIngest runs BenchmarkIngest's measure; prepare, when set, fills
// the database first, and configure adjusts the consumer.
func benchmarkIngest(b *testing.B, subs benchSubscriptions, prepare func(*env), configure ...func(*Options)) {
	e := newEnv(b)
	e.addTenants("t-bench")
	if prepare != nil {
		prepare(e)
	}
	for i, filter := range subs.filters {
		e.exec(`
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret, filter)
VALUES (gen_random_uuid(), 't-bench', $1, 'webhook', 'https://example.com', '{*}', 'active', 'ciphertext', nullif($2, ''))`,
			fmt.Sprint("bench-", i), filter)
	}
	m := e.start(append([]func(*Options){func(o *Options) { o.MaxBatchRecords = DefaultMaxBatchRecords }}, configure...)...)
	e.produce(cloudEvent(0, "t-bench", eventID(0), []byte("{}")))
	e.waitStored(testTopic, 1)

	value := benchmarkPayload()
	partitions := cmp.Or(subs.partitions, testPartitions)
	m.client.PauseFetchTopics(testTopic)
	const produceChunk = 5000
	records := make([]*kgo.Record, 0, produceChunk)
	for i := 1; i <= b.N; i++ {
		rec := cloudEvent(int32(i%partitions), "t-bench", eventID(i), value)
		// A producer's trace context as OpenTelemetry's Kafka
		// instrumentation writes it: a plain header.
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: "traceparent", Value: []byte(benchTraceParent)})
		records = append(records, rec)
		if len(records) == produceChunk || i == b.N {
			e.produce(records...)
			records = records[:0]
		}
	}

	b.ResetTimer()
	start := time.Now()
	m.client.ResumeFetchTopics(testTopic)
	for e.storedTotal(testTopic) < int64(b.N)+1 {
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()

	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	if want := subs.jobs(b.N); e.count(`SELECT count(*) FROM delivery_jobs WHERE tenant_id = 't-bench'`) != want {
		b.Fatalf("delivery jobs = %d, want %d", e.count(`SELECT count(*) FROM delivery_jobs WHERE tenant_id = 't-bench'`), want)
	}
	m.stop()
}

const benchTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// BenchmarkIngestTracing is BenchmarkIngest (three subscriptions) with
// tracing off and on. On, every partition batch makes a span linked to its
// records' trace contexts, exported over OTLP/HTTP to a real receiver in
// the process. Compare events/s; run with -benchtime=50000x.
func BenchmarkIngestTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "tracing=off"
		if on {
			name = "tracing=on"
		}
		b.Run(name, func(b *testing.B) {
			var configure []func(*Options)
			if on {
				tr, _ := otlptest.StartTracing(b)
				configure = append(configure, func(o *Options) { o.Tracing = tr })
			}
			benchmarkIngest(b, unfiltered(3), nil, configure...)
		})
	}
}

// benchmarkPayload is a 1 KiB JSON document.
func benchmarkPayload() []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"transaction_id":"0190b6a2-7c1e-7d3a-9f00-123456789abc","amount":1000,"memo":"`)
	for buf.Len() < 1022 {
		buf.WriteByte('x')
	}
	buf.WriteString(`"}`)
	return buf.Bytes()
}
