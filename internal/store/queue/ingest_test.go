package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

const (
	ingestGroup = "streaming-hub"
	ingestTopic = "lerian.streaming.midaz_transaction.posted"
)

// The other concerns' statements, embedded in testStore under names of
// their own.
type (
	catalogStore   = catalog.Store
	lifecycleStore = lifecycle.Store
)

// testStore is this package's statements with those of the other concerns
// that tests set up and read back with.
type testStore struct {
	Pool *pgxpool.Pool
	*Store
	*catalogStore
	*lifecycleStore
}

// ingestStore returns the statements over a fresh migrated database.
func ingestStore(t testing.TB) *testStore {
	t.Helper()
	pool, err := pg.Open(context.Background(), pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(pool.Close)
	return &testStore{Pool: pool, Store: New(pool), catalogStore: catalog.New(pool), lifecycleStore: lifecycle.New(pool)}
}

// testEventID is a canonical UUIDv7 that differs by n.
func testEventID(n int) string { return fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012x", n) }

// eventHeaders are the headers of a well-formed CloudEvent.
func eventHeaders(tenant, id string) []event.Header {
	h := func(k, v string) event.Header { return event.Header{Key: k, Value: []byte(v)} }
	return []event.Header{
		h("ce-specversion", "1.0"), h("ce-id", id), h("ce-source", "midaz"),
		h("ce-type", "studio.lerian.transaction.posted"), h("ce-time", "2026-11-29T12:00:00.123456Z"),
		h("ce-schemaversion", "1.2.0"), h("ce-resourcetype", "transaction"), h("ce-eventtype", "posted"),
		h("ce-tenantid", tenant), h("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
		{Key: "x-null-value", Value: nil},
	}
}

// accepted builds the record ingest hands over for an event that passed
// rules 1–6.
func accepted(t *testing.T, offset int64, tenant, id string, value []byte) IngestRecord {
	t.Helper()
	headers := eventHeaders(tenant, id)
	ev, v, ok := event.Parse(headers, value, event.Options{})
	if !ok {
		t.Fatalf("test event does not parse: %v", v)
	}
	return IngestRecord{Offset: offset, Key: []byte("k"), Headers: headers, Value: value, Verdict: event.Accepted(), Event: ev}
}

func quarantined(offset int64, reason event.Reason) IngestRecord {
	return IngestRecord{
		Offset:  offset,
		Key:     []byte{0x00, 0xff},
		Headers: []event.Header{{Key: "ce-id", Value: []byte("not-a-uuid")}, {Key: "ce-x", Value: nil}},
		Value:   []byte{0xde, 0xad},
		Verdict: event.Verdict{Kind: event.Quarantine, Reason: reason, Detail: "detail of " + string(reason)},
	}
}

func discarded(offset int64, reason event.Reason) IngestRecord {
	return IngestRecord{Offset: offset, Value: []byte("{}"), Verdict: event.Verdict{Kind: event.Discard, Reason: reason}}
}

func batchOf(partition int32, next int64, records ...IngestRecord) IngestBatch {
	return IngestBatch{Group: ingestGroup, Topic: ingestTopic, Partition: partition, Records: records, NextOffset: next, Route: routeNewEvents}
}

// routeNewEvents is the router ingest passes, without filter limits.
var routeNewEvents = match.Router(match.FilterLimits{})

func writeBatch(t *testing.T, st *testStore, b IngestBatch) IngestResult {
	t.Helper()
	res, err := st.WriteIngestBatch(context.Background(), b)
	if err != nil {
		t.Fatalf("WriteIngestBatch(%s/%d @%d): %v", b.Topic, b.Partition, b.NextOffset, err)
	}
	return res
}

func reasons(vs []event.Verdict) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v.Kind)
		if v.Reason != "" {
			out[i] += "/" + string(v.Reason)
		}
	}
	return out
}

func queryCount(t *testing.T, st *testStore, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := st.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func storedNextOffset(t *testing.T, st *testStore, partition int32) int64 {
	t.Helper()
	return queryCount(t, st, `SELECT next_offset FROM kafka_offsets WHERE consumer_group = $1 AND topic = $2 AND kafka_partition = $3`,
		ingestGroup, ingestTopic, partition)
}

func TestWriteIngestBatchGivesEveryRecordItsVerdict(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	// The inbox already holds one event of t-a.
	writeBatch(t, st, batchOf(1, 1, accepted(t, 0, "t-a", testEventID(1), []byte(`{"n":0}`))))

	res := writeBatch(t, st, batchOf(0, 9,
		accepted(t, 2, "t-a", testEventID(2), []byte(`{"n":2}`)),
		discarded(3, event.ReasonSystemEvent),
		quarantined(4, event.ReasonInvalidID),
		accepted(t, 5, "t-a", testEventID(1), []byte(`{"dup":"stored"}`)),
		accepted(t, 6, "t-b", testEventID(2), nil), // same id, other tenant: a different event
		accepted(t, 7, "t-a", testEventID(2), []byte(`{"dup":"in batch"}`)),
		discarded(8, event.ReasonUnknownTenant),
	))
	want := []string{"accept", "discard/system_event", "quarantine/invalid_id", "discard/duplicate", "accept", "discard/duplicate", "discard/unknown_tenant"}
	if got := reasons(res.Verdicts); !slices.Equal(got, want) {
		t.Fatalf("verdicts = %q, want %q", got, want)
	}
	if res.Skipped != 0 || res.NextOffset != 9 {
		t.Fatalf("Skipped, NextOffset = %d, %d; want 0, 9", res.Skipped, res.NextOffset)
	}
	wantCounts := []VerdictCount{
		{Kind: event.Accept, Count: 2},
		{Kind: event.Discard, Reason: event.ReasonSystemEvent, Count: 1},
		{Kind: event.Quarantine, Reason: event.ReasonInvalidID, Count: 1},
		{Kind: event.Discard, Reason: event.ReasonDuplicate, Count: 2},
		{Kind: event.Discard, Reason: event.ReasonUnknownTenant, Count: 1},
	}
	if got := res.Counts(); !slices.Equal(got, wantCounts) {
		t.Fatalf("Counts() = %+v, want %+v", got, wantCounts)
	}

	// The first record of (t-a, id 2) is the one the inbox holds, with the
	// record's attributes, every header and the value byte for byte.
	var (
		payload, keys, values         [][]byte
		key, version, source, evType  string
		major                         int
		evTime                        time.Time
		subject, contentType, traceID *string
		offset                        int64
	)
	err := st.Pool.QueryRow(ctx, `
SELECT array[payload], header_keys, header_values, event_key, schema_version, schema_major, source, type, time,
       subject, datacontenttype, traceparent, kafka_offset
FROM events WHERE tenant_id = 't-a' AND id = $1`, testEventID(2)).Scan(
		&payload, &keys, &values, &key, &version, &major, &source, &evType, &evTime, &subject, &contentType, &traceID, &offset)
	if err != nil {
		t.Fatal(err)
	}
	if string(payload[0]) != `{"n":2}` || offset != 2 {
		t.Errorf("stored payload %q at offset %d, want the first record's {\"n\":2} at 2", payload[0], offset)
	}
	if key != "transaction.posted" || version != "1.2.0" || major != 1 || source != "midaz" ||
		evType != "studio.lerian.transaction.posted" || !evTime.Equal(time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)) {
		t.Errorf("stored attributes %q %q %d %q %q %v", key, version, major, source, evType, evTime)
	}
	if subject != nil || contentType != nil {
		t.Errorf("absent optional attributes stored as %v %v, want NULL", subject, contentType)
	}
	// The plain traceparent header is the event's trace context.
	if traceID == nil || *traceID != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Errorf("traceparent stored as %v, want the plain header's", traceID)
	}
	headers := eventHeaders("t-a", testEventID(2))
	if len(keys) != len(headers) || len(values) != len(headers) {
		t.Fatalf("stored %d header keys and %d values, want %d", len(keys), len(values), len(headers))
	}
	// Attribute headers are kept as references to the columns
	// (internal/event, Stored); reading the event restores them.
	read, err := st.GetInboxEvent(context.Background(), "t-a", uuid.MustParse(testEventID(2)))
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range headers {
		got := read.Headers[i]
		if string(got.Key) != h.Key || !bytes.Equal(got.Value, h.Value) || (got.Value == nil) != (h.Value == nil) {
			t.Errorf("header %d read as %q=%q, want %q=%q", i, got.Key, got.Value, h.Key, h.Value)
		}
	}

	// An empty record value is an empty payload, not NULL.
	if n := queryCount(t, st, `SELECT octet_length(payload) FROM events WHERE tenant_id = 't-b'`); n != 0 {
		t.Errorf("t-b payload is %d bytes, want 0", n)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM events`); n != 3 {
		t.Errorf("inbox holds %d events, want 3", n)
	}

	var reason, detail string
	var qKey []byte
	var qKeys, qValues [][]byte
	var qValue []byte
	err = st.Pool.QueryRow(ctx, `
SELECT reason, detail, record_key, header_keys, header_values, value FROM quarantine
WHERE topic = $1 AND kafka_partition = 0 AND kafka_offset = 4`, ingestTopic).Scan(&reason, &detail, &qKey, &qKeys, &qValues, &qValue)
	if err != nil {
		t.Fatal(err)
	}
	if reason != "invalid_id" || detail != "detail of invalid_id" || !bytes.Equal(qKey, []byte{0x00, 0xff}) ||
		!bytes.Equal(qValue, []byte{0xde, 0xad}) || len(qKeys) != 2 || string(qKeys[0]) != "ce-id" ||
		string(qValues[0]) != "not-a-uuid" || qValues[1] != nil {
		t.Errorf("quarantine row = %q %q key=%x headers=%q/%q value=%x", reason, detail, qKey, qKeys, qValues, qValue)
	}
	if got := storedNextOffset(t, st, 0); got != 9 {
		t.Errorf("stored offset = %d, want 9", got)
	}
}

func TestWriteIngestBatchStoresEachOffsetOnce(t *testing.T) {
	st := ingestStore(t)
	records := make([]IngestRecord, 15)
	for i := range records {
		if i%5 == 4 {
			records[i] = quarantined(int64(i), event.ReasonMissingType)
		} else {
			records[i] = accepted(t, int64(i), "t-a", testEventID(i), []byte("{}"))
		}
	}
	first := writeBatch(t, st, batchOf(0, 10, records[:10]...))
	if first.Skipped != 0 || len(first.Verdicts) != 10 {
		t.Fatalf("first write: Skipped %d, %d verdicts; want 0, 10", first.Skipped, len(first.Verdicts))
	}

	tests := []struct {
		name        string
		batch       IngestBatch
		wantSkipped int
		wantNext    int64
		wantNew     int // events
	}{
		// A restart after a lost Kafka commit reads the same records again.
		{"same batch again", batchOf(0, 10, records[:10]...), 10, 10, 0},
		// A new owner whose Kafka offset lagged overlaps what is stored.
		{"overlapping batch", batchOf(0, 15, records[5:15]...), 5, 15, 4},
		// An old owner still running after a rebalance writes late.
		{"stale batch", batchOf(0, 5, records[:5]...), 5, 15, 0},
	}
	for _, tt := range tests {
		before := queryCount(t, st, `SELECT count(*) FROM events`)
		res := writeBatch(t, st, tt.batch)
		if res.Skipped != tt.wantSkipped || res.NextOffset != tt.wantNext || len(res.Verdicts) != len(tt.batch.Records)-tt.wantSkipped {
			t.Errorf("%s: Skipped %d, NextOffset %d, %d verdicts; want %d, %d, %d", tt.name,
				res.Skipped, res.NextOffset, len(res.Verdicts), tt.wantSkipped, tt.wantNext, len(tt.batch.Records)-tt.wantSkipped)
		}
		for _, v := range res.Verdicts {
			if v.Reason == event.ReasonDuplicate {
				t.Errorf("%s: a stored record was judged again as a duplicate", tt.name)
			}
		}
		if got := queryCount(t, st, `SELECT count(*) FROM events`) - before; got != int64(tt.wantNew) {
			t.Errorf("%s: %d new events, want %d", tt.name, got, tt.wantNew)
		}
		if got := storedNextOffset(t, st, 0); got != tt.wantNext {
			t.Errorf("%s: stored offset %d, want %d", tt.name, got, tt.wantNext)
		}
	}
	if n := queryCount(t, st, `SELECT count(*) FROM events`); n != 12 {
		t.Errorf("inbox holds %d events, want 12", n)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM quarantine`); n != 3 {
		t.Errorf("quarantine holds %d records, want 3", n)
	}
}

func TestWriteIngestBatchConcurrentWritersOfOnePartition(t *testing.T) {
	st := ingestStore(t)
	records := make([]IngestRecord, 50)
	for i := range records {
		records[i] = accepted(t, int64(i), "t-a", testEventID(i), []byte("{}"))
	}
	b := batchOf(0, 50, records...)
	var wg sync.WaitGroup
	results := make([]IngestResult, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = st.WriteIngestBatch(context.Background(), b) })
	}
	wg.Wait()
	writers := 0
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		switch res.Skipped {
		case 0:
			writers++
		case 50:
		default:
			t.Errorf("writer %d skipped %d records, want 0 or 50", i, res.Skipped)
		}
	}
	if writers != 1 {
		t.Errorf("%d writers stored the batch, want exactly 1", writers)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM events`); n != 50 {
		t.Errorf("inbox holds %d events, want 50", n)
	}
}

func TestWriteIngestBatchSeqFollowsPartitionOrder(t *testing.T) {
	st := ingestStore(t)
	var records []IngestRecord
	for i := range 300 {
		tenant := []string{"t-a", "t-b", "t-c"}[i%3]
		records = append(records, accepted(t, int64(1000+2*i), tenant, testEventID(i), []byte("{}")))
	}
	writeBatch(t, st, batchOf(2, records[len(records)-1].Offset+1, records...))
	rows, err := st.Pool.Query(context.Background(), `SELECT kafka_offset FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	offsets, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if len(offsets) != 300 || !slices.IsSorted(offsets) {
		t.Fatalf("offsets in seq order are not ascending: %v", offsets)
	}
}

func TestWriteIngestBatchCreatesDeliveryWork(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	pushSub := addTestSubscription(t, st, "t-a", "webhook", []string{"transaction.*"})
	pullSub := addTestSubscription(t, st, "t-a", "pull", []string{"*"})
	addTestSubscription(t, st, "t-b", "webhook", []string{"*"}) // another tenant's

	listener, err := pgx.Connect(ctx, st.Pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(ctx)
	if _, err := listener.Exec(ctx, "LISTEN "+pg.JobsChannel); err != nil {
		t.Fatal(err)
	}

	res := writeBatch(t, st, batchOf(0, 3,
		accepted(t, 0, "t-a", testEventID(1), []byte("{}")),
		accepted(t, 1, "t-a", testEventID(1), []byte("{}")), // duplicate: no second job
		accepted(t, 2, "t-a", testEventID(2), []byte("{}")),
	))
	if res.Jobs != 2 || res.PullEntries != 2 {
		t.Fatalf("Jobs, PullEntries = %d, %d; want 2, 2", res.Jobs, res.PullEntries)
	}

	rows, err := st.Pool.Query(ctx, `
SELECT j.id::text, j.tenant_id, j.state, j.attempts, j.next_attempt_at <= now(), e.id::text
FROM delivery_jobs j JOIN events e ON e.seq = j.event_seq
WHERE j.subscription_id = $1 ORDER BY j.event_seq`, pushSub)
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		id, tenant, state string
		attempts          int
		due               bool
		event             string
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (j job, err error) {
		err = r.Scan(&j.id, &j.tenant, &j.state, &j.attempts, &j.due, &j.event)
		return j, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].event != testEventID(1) || jobs[1].event != testEventID(2) {
		t.Fatalf("jobs = %+v, want one per event in seq order", jobs)
	}
	for _, j := range jobs {
		if j.tenant != "t-a" || j.state != "pending" || j.attempts != 0 || !j.due {
			t.Errorf("job %+v, want tenant t-a, pending, 0 attempts, due", j)
		}
		if j.id[14] != '7' || !bytes.ContainsAny([]byte{j.id[19]}, "89ab") {
			t.Errorf("job id %s is not a UUIDv7", j.id)
		}
	}
	if n := queryCount(t, st, `SELECT count(*) FROM pull_entries WHERE subscription_id = $1`, pullSub); n != 2 {
		t.Errorf("pull entries = %d, want 2", n)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_jobs`); n != 2 {
		t.Errorf("delivery jobs = %d, want 2 (none for the other tenant)", n)
	}

	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := listener.WaitForNotification(waitCtx); err != nil {
		t.Errorf("no %s notification after jobs were created: %v", pg.JobsChannel, err)
	}
}

// addTestSubscription adds an enabled, verified subscription and returns its id.
func addTestSubscription(t testing.TB, st *testStore, tenant, sink string, eventTypes []string) string {
	t.Helper()
	var secret *string
	if sink == "webhook" {
		s := "encrypted-secret"
		secret = &s
	}
	ctx := context.Background()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING`, tenant); err != nil {
		t.Fatalf("insert tenant: %v", err)
	}
	var id string
	err := st.Pool.QueryRow(ctx, `
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
VALUES (gen_random_uuid(), $1, 'test', $2, 'somewhere', $3, 'active', $4) RETURNING id::text`,
		tenant, sink, eventTypes, secret).Scan(&id)
	if err != nil {
		t.Fatalf("insert subscription: %v", err)
	}
	return id
}

func TestWriteIngestBatchRejectsMalformedBatches(t *testing.T) {
	st := ingestStore(t)
	unrouted := batchOf(0, 2, accepted(t, 1, "t-a", testEventID(1), []byte(`{}`)))
	unrouted.Route = nil
	tests := []struct {
		name  string
		batch IngestBatch
	}{
		{"an accepted record and no route", unrouted},
		{"offsets out of order", batchOf(0, 5, discarded(3, event.ReasonSystemEvent), discarded(2, event.ReasonSystemEvent))},
		{"repeated offset", batchOf(0, 5, discarded(3, event.ReasonSystemEvent), discarded(3, event.ReasonSystemEvent))},
		{"next offset not past the last record", batchOf(0, 3, discarded(3, event.ReasonSystemEvent))},
	}
	for _, tt := range tests {
		if _, err := st.WriteIngestBatch(context.Background(), tt.batch); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if n := queryCount(t, st, `SELECT count(*) FROM kafka_offsets`); n != 0 {
		t.Errorf("a rejected batch stored %d offsets", n)
	}
}

func TestWriteIngestBatchUnavailableDatabase(t *testing.T) {
	// Nothing listens on port 1: every connection attempt is refused.
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:1/hubctl?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st := &Store{Pool: pool}
	_, err = st.WriteIngestBatch(context.Background(), batchOf(0, 1, discarded(0, event.ReasonSystemEvent)))
	if !errors.Is(err, pg.ErrUnavailable) {
		t.Fatalf("without a server: %v, want pg.ErrUnavailable", err)
	}
}

func TestJobIDsIncreaseStrictly(t *testing.T) {
	prev := newJobID(time.Time{})
	for i := range 10_000 {
		u := newJobID(time.Time{})
		if bytes.Compare(u[:], prev[:]) <= 0 {
			t.Fatalf("id %d %x is not greater than %x", i, u, prev)
		}
		if u[6]>>4 != 7 || u[8]>>6 != 0b10 {
			t.Fatalf("id %x lacks version 7 or the RFC 4122 variant", u)
		}
		prev = u
	}
}

// TestWriteIngestBatchSameEventsOnSeveralPartitions has producers repeat
// events on other partitions, written concurrently: each event is stored
// once, every other copy is a duplicate, and no write fails.
func TestWriteIngestBatchSameEventsOnSeveralPartitions(t *testing.T) {
	st := ingestStore(t)
	const partitions, events = 4, 40
	var wg sync.WaitGroup
	results := make([]IngestResult, partitions)
	errs := make([]error, partitions)
	for p := range partitions {
		records := make([]IngestRecord, events)
		for i := range records {
			records[i] = accepted(t, int64(i), "t-a", testEventID(i), []byte("{}"))
		}
		wg.Go(func() {
			results[p], errs[p] = st.WriteIngestBatch(context.Background(), batchOf(int32(p), events, records...))
		})
	}
	wg.Wait()
	accepts := 0
	for p, res := range results {
		if errs[p] != nil {
			t.Fatalf("partition %d: %v", p, errs[p])
		}
		for _, v := range res.Verdicts {
			switch {
			case v.Kind == event.Accept:
				accepts++
			case v.Reason != event.ReasonDuplicate:
				t.Errorf("partition %d: verdict %v, want accept or duplicate", p, v)
			}
		}
	}
	if accepts != events {
		t.Errorf("%d events accepted across partitions, want each of the %d once", accepts, events)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM events`); n != events {
		t.Errorf("inbox holds %d events, want %d", n, events)
	}
	// Duplicates cost seqs but never their order: seq still follows the
	// offsets within each partition.
	rows, err := st.Pool.Query(context.Background(), `SELECT kafka_partition, kafka_offset FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	last := make(map[int32]int64)
	var p int32
	var off int64
	_, err = pgx.ForEachRow(rows, []any{&p, &off}, func() error {
		if prev, seen := last[p]; seen && off <= prev {
			t.Errorf("partition %d: offset %d has a later seq than offset %d", p, prev, off)
		}
		last[p] = off
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
