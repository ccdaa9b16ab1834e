// Package history fills a hub's database with the stored past of a busy
// hub, for benchmarks that compare hot paths on an empty database with the
// same paths beside millions of rows: each event with its id and a
// succeeded delivery job with one attempt, spread over the daily
// partitions of the days before now, as retention leaves them.
package history

import (
	"context"
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/store"
)

// Days is how many days before now the history spans.
const Days = 7

// Seed stores n past events of tenant (created when missing), delivered
// to a subscription of its own that is deleted, so it matches nothing new
// and claims never see it: an equal share on each of the Days days before
// now, in one INSERT ... SELECT per day and table, then analyses the
// tables.
//
// The database must be freshly migrated: the catch-all range below the
// first day, empty then, is narrowed to end where the history starts, so
// that the history's days get partitions of their own (a migrated hub's
// past starts on its migration day).
func Seed(ctx context.Context, st *store.Store, tenant string, n int, now time.Time) error {
	var subscription string
	err := st.Pool.QueryRow(ctx, `
WITH t AS (INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING)
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret, deleted_at)
VALUES (gen_random_uuid(), $1, 'history', 'webhook', 'https://example.com', '{*}', 'active', 'ciphertext', now())
RETURNING id::text`, tenant).Scan(&subscription)
	if err != nil {
		return fmt.Errorf("create the history's subscription: %w", err)
	}
	first := store.DaySeqBase(now.Add(-Days * 24 * time.Hour))
	for _, t := range []string{"events", "pull_entries"} {
		_, err := st.Pool.Exec(ctx, fmt.Sprintf(`
DROP TABLE %[1]s_legacy;
CREATE TABLE %[1]s_legacy PARTITION OF %[1]s FOR VALUES FROM (MINVALUE) TO (%[2]d)`, t, first))
		if err != nil {
			return fmt.Errorf("narrow %s_legacy: %w", t, err)
		}
	}
	for k := Days; k >= 0; k-- {
		if err := st.EnsurePartitions(ctx, now.Add(-time.Duration(k)*24*time.Hour)); err != nil {
			return err
		}
	}
	perDay := n / Days
	for k := Days; k >= 1; k-- {
		dayStart := store.DayStart(now.Add(-time.Duration(k) * 24 * time.Hour))
		base := store.DaySeqBase(dayStart)
		_, err := st.Pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (seq, tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
    SELECT $1::bigint + g, $2, `+uuidV7+`, 'transaction.posted', '1.0', 1, 'midaz',
           'studio.lerian.transaction.posted', $4::timestamptz + g * interval '40 ms',
           ARRAY['ce-id'::bytea], ARRAY['x'::bytea], convert_to(repeat('x', 1000), 'UTF8'), 'history', 0, g,
           $4::timestamptz + g * interval '40 ms'
    FROM generate_series(0, $3::int - 1) g
    RETURNING seq, id, received_at),
 ids AS (INSERT INTO event_ids (tenant_id, id, seq) SELECT $2, id, seq FROM ev),
 jobs AS (
    INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, recorded_attempts,
                               last_status, succeeded_at, created_at, updated_at)
    SELECT `+jobID+`, $2, $5::uuid, seq, 'succeeded', 1, 1, 204, received_at, received_at, received_at FROM ev
    RETURNING id, updated_at)
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code)
SELECT gen_random_uuid(), id, 1, updated_at, 12, 'succeeded', 204 FROM jobs`,
			base, tenant, perDay, dayStart, subscription)
		if err != nil {
			return fmt.Errorf("seed the history of %s: %w", dayStart.Format(time.DateOnly), err)
		}
		_, err = st.Pool.Exec(ctx, `
INSERT INTO event_id_days (day, last_seq) VALUES ($1, $2)
ON CONFLICT (day, slot) DO UPDATE SET last_seq = greatest(event_id_days.last_seq, excluded.last_seq)`, dayStart, base+int64(perDay)-1)
		if err != nil {
			return fmt.Errorf("seed the history of %s: %w", dayStart.Format(time.DateOnly), err)
		}
	}
	// What autovacuum would do over days, done now so that it does not
	// run during the measure.
	if _, err := st.Pool.Exec(ctx, `VACUUM (ANALYZE) events, event_ids, event_id_days, delivery_jobs, delivery_attempts`); err != nil {
		return err
	}
	// The gigabytes just written would otherwise be flushed by the
	// checkpointer during the measure, a cost of seeding, not of the
	// history: a hub's past was checkpointed long ago.
	_, err = st.Pool.Exec(ctx, `CHECKPOINT`)
	return err
}

// jobID is a UUIDv7 of the job's creation, as ingest makes them, so that
// each day's jobs live in that day's partition.
const jobID = `(lpad(to_hex(floor(extract(epoch FROM received_at) * 1000)::bigint), 12, '0')
    || '7' || substr(md5(seq::text), 1, 3) || '8' || substr(md5(seq::text), 4, 15))::uuid`

// uuidV7 is a UUIDv7 of the event's time, told apart by g and the tenant,
// as producers make them (PostgreSQL 15 has no function for it).
const uuidV7 = `(lpad(to_hex(floor(extract(epoch FROM $4::timestamptz + g * interval '40 ms') * 1000)::bigint), 12, '0')
    || '7' || substr(md5(g::text || $2), 1, 3) || '8' || substr(md5(g::text || $2), 4, 15))::uuid`
