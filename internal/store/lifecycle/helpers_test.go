package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/autodisable"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// Retention and purges are checked against what the queue and the catalog
// write; these are the queue package's test helpers over this package's
// testStore.

// The other concerns' statements, embedded in testStore under names of
// their own.
type (
	queueStore   = queue.Store
	catalogStore = catalog.Store
)

// testStore is this package's statements with those of the other concerns
// that tests set up and read back with.
type testStore struct {
	Pool *pgxpool.Pool
	*Store
	*queueStore
	*catalogStore
}

// ingestStore returns the statements over a fresh migrated database.
func ingestStore(t testing.TB) *testStore {
	t.Helper()
	pool, err := pg.Open(context.Background(), pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(pool.Close)
	return &testStore{Pool: pool, Store: New(pool), queueStore: queue.New(pool), catalogStore: catalog.New(pool)}
}

const (
	ingestGroup = "streaming-hub"
	ingestTopic = "lerian.streaming.midaz_transaction.posted"
)

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
func accepted(t *testing.T, offset int64, tenant, id string, value []byte) queue.IngestRecord {
	t.Helper()
	headers := eventHeaders(tenant, id)
	ev, v, ok := event.Parse(headers, value, event.Options{})
	if !ok {
		t.Fatalf("test event does not parse: %v", v)
	}
	return queue.IngestRecord{Offset: offset, Key: []byte("k"), Headers: headers, Value: value, Verdict: event.Accepted(), Event: ev}
}

func quarantined(offset int64, reason event.Reason) queue.IngestRecord {
	return queue.IngestRecord{
		Offset:  offset,
		Key:     []byte{0x00, 0xff},
		Headers: []event.Header{{Key: "ce-id", Value: []byte("not-a-uuid")}, {Key: "ce-x", Value: nil}},
		Value:   []byte{0xde, 0xad},
		Verdict: event.Verdict{Kind: event.Quarantine, Reason: reason, Detail: "detail of " + string(reason)},
	}
}

func batchOf(partition int32, next int64, records ...queue.IngestRecord) queue.IngestBatch {
	return queue.IngestBatch{Group: ingestGroup, Topic: ingestTopic, Partition: partition, Records: records, NextOffset: next, Route: routeNewEvents}
}

// routeNewEvents is the router ingest passes, without filter limits.
var routeNewEvents = match.Router(match.FilterLimits{})

func writeBatch(t *testing.T, st *testStore, b queue.IngestBatch) queue.IngestResult {
	t.Helper()
	res, err := st.WriteIngestBatch(context.Background(), b)
	if err != nil {
		t.Fatalf("WriteIngestBatch(%s/%d @%d): %v", b.Topic, b.Partition, b.NextOffset, err)
	}
	return res
}

func queryCount(t *testing.T, st *testStore, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := st.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
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

type jobRow struct {
	State      string
	Attempts   int
	Recoveries int
	LeaseOwner *string
	DeadReason *string
	LastError  *string
	LastStatus *int
	NextAt     time.Time
}

func readJob(t *testing.T, st *testStore, id uuid.UUID) jobRow {
	t.Helper()
	var j jobRow
	err := st.Pool.QueryRow(context.Background(), `
SELECT state, attempts, recoveries, lease_owner, dead_reason, last_error, last_status, next_attempt_at
FROM delivery_jobs WHERE id = $1`, id).Scan(&j.State, &j.Attempts, &j.Recoveries, &j.LeaseOwner, &j.DeadReason,
		&j.LastError, &j.LastStatus, &j.NextAt)
	if err != nil {
		t.Fatalf("read job %s: %v", id, err)
	}
	return j
}

var noAutoDisable = autoDisableBy(autodisable.Policy{Enabled: false, Window: time.Hour, Spread: time.Hour})

// autoDisableBy is policy as Complete asks for it, as the dispatcher passes it.
func autoDisableBy(policy autodisable.Policy) queue.AutoDisable {
	return func(span queue.FailureSpan, finished time.Time) (queue.FailureSpan, bool) {
		next, disable := policy.OnFailure(autodisable.Span(span), finished)
		return queue.FailureSpan(next), disable
	}
}

// seedDays puts events with pending and finished jobs, and pull entries,
// into three daily partitions (yesterday, today, tomorrow), as retention
// leaves them when traffic spans days.
func seedDays(t *testing.T, st *testStore, now time.Time) (push, pull string) {
	t.Helper()
	ctx := context.Background()
	if err := st.EnsurePartitions(ctx, now.Add(-day)); err != nil {
		t.Fatal(err)
	}
	if err := st.EnsurePartitions(ctx, now); err != nil {
		t.Fatal(err)
	}
	push = addTestSubscription(t, st, "acme", "webhook", []string{"transaction.posted"})
	pull = addTestSubscription(t, st, "acme", "pull", []string{"transaction.posted"})
	if _, err := st.Pool.Exec(ctx, `INSERT INTO pull_cursors (subscription_id) VALUES ($1)`, pull); err != nil {
		t.Fatal(err)
	}
	for k := -1; k <= 1; k++ {
		base := pg.DaySeqBase(now.Add(time.Duration(k) * day))
		_, err := st.Pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (seq, tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT $1::bigint + g, 'acme', gen_random_uuid(), 'transaction.posted', '1.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), '{}', '{}', '\x7b7d', 'topic', 0, g
    FROM generate_series(0, 4999) g RETURNING seq),
 pe AS (INSERT INTO pull_entries (subscription_id, event_seq) SELECT $3, seq FROM ev)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, succeeded_at, updated_at)
SELECT (lpad(to_hex((extract(epoch FROM $4::timestamptz) * 1000)::bigint), 12, '0')
        || substr(replace(gen_random_uuid()::text, '-', ''), 13))::uuid, 'acme', $2, seq, CASE WHEN seq % 10 = 0 THEN 'pending' ELSE 'succeeded' END,
       CASE WHEN seq % 10 <> 0 THEN now() END, $4
FROM ev`, base, push, pull, now.Add(time.Duration(k)*day))
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	return push, pull
}

// explainGeneric explains sql as the hub runs it once its statement cache
// has settled: prepared, with the generic plan, the arguments bound at
// execution. (explain binds them at planning, which lets the planner see
// them as constants.)
func explainGeneric(t *testing.T, st *testStore, sql string, args pgx.StrictNamedArgs) string {
	t.Helper()
	ctx := context.Background()
	tx, err := st.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	positional, values, err := args.RewriteQuery(ctx, tx.Conn(), sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := tx.Conn().Prepare(ctx, "explained", positional)
	if err != nil {
		t.Fatal(err)
	}
	// Prepared statements outlive the transaction; the next explanation
	// may get the same connection.
	defer func() { _ = tx.Conn().Deallocate(context.WithoutCancel(ctx), "explained") }()
	// EXECUTE under EXPLAIN takes no bound parameters: each value goes
	// in as a literal of its parameter's type.
	literals := make([]string, len(values))
	for i, v := range values {
		var typ string
		if err := tx.QueryRow(ctx, `SELECT format_type($1, NULL)`, sd.ParamOIDs[i]).Scan(&typ); err != nil {
			t.Fatal(err)
		}
		var lit *string
		if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT quote_literal(($1::%s)::text)`, typ), v).Scan(&lit); err != nil {
			t.Fatal(err)
		}
		literals[i] = "NULL::" + typ
		if lit != nil {
			literals[i] = *lit + "::" + typ
		}
	}
	rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE explained("+strings.Join(literals, ", ")+")")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	return strings.Join(lines, "\n")
}
