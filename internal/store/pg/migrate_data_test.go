package pg_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// v1Data fills the schema of migration 1 with one of everything the storage
// lifecycle migration converts: events, jobs in every state with attempts,
// a pull stream with its cursor, quarantined records and stored offsets.
const v1Data = `
INSERT INTO tenants (id) VALUES ('acme'), ('globex');
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
VALUES ('01900000-0000-7000-8000-000000000001', 'acme', 'push', 'webhook', 'https://example.com:443', '{transaction.posted}', 'active', 'v1:k:x'),
       ('01900000-0000-7000-8000-000000000002', 'acme', 'pull', 'pull', 'pull', '{transaction.posted}', 'active', NULL);
INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time, subject,
                    header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
SELECT CASE WHEN g % 2 = 0 THEN 'acme' ELSE 'globex' END,
       ('0190b6a2-7c1e-7d3a-9f00-' || lpad(to_hex(g), 12, '0'))::uuid, 'transaction.posted', '1.0', 1, 'midaz',
       'studio.lerian.transaction.posted', '2026-11-01T00:00:00Z'::timestamptz + g * interval '1 hour', 'subject-' || g,
       ARRAY['ce-id'::bytea], ARRAY[convert_to('v' || g, 'UTF8')], convert_to('{"n":' || g || '}', 'UTF8'), 'topic', 0, g,
       '2026-11-01T00:00:00Z'::timestamptz + g * interval '1 hour'
FROM generate_series(1, 10) g;
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, recorded_attempts, recoveries,
                           next_attempt_at, lease_owner, lease_until, last_error, last_status, dead_reason, dead_at, succeeded_at,
                           created_at, updated_at)
VALUES
 ('01900000-0000-7000-8000-00000000a001', 'acme', '01900000-0000-7000-8000-000000000001', 2, 'pending', 1, 1, 0,
  '2026-11-02T00:00:00Z', NULL, NULL, 'HTTP 503', 503, NULL, NULL, NULL, '2026-11-01T02:00:00Z', '2026-11-01T02:00:05Z'),
 ('01900000-0000-7000-8000-00000000a002', 'acme', '01900000-0000-7000-8000-000000000001', 4, 'in_flight', 0, 0, 1,
  '2026-11-01T04:00:00Z', 'worker-1', '2026-11-01T04:00:10Z', NULL, NULL, NULL, NULL, NULL, '2026-11-01T04:00:00Z', '2026-11-01T04:00:00Z'),
 ('01900000-0000-7000-8000-00000000a003', 'acme', '01900000-0000-7000-8000-000000000001', 6, 'succeeded', 1, 1, 0,
  '2026-11-01T06:00:00Z', NULL, NULL, NULL, 200, NULL, NULL, '2026-11-01T06:00:01Z', '2026-11-01T06:00:00Z', '2026-11-01T06:00:01Z'),
 ('01900000-0000-7000-8000-00000000a004', 'acme', '01900000-0000-7000-8000-000000000001', 8, 'dead', 8, 8, 0,
  '2026-11-01T08:00:00Z', NULL, NULL, 'HTTP 500', 500, 'exhausted', '2026-11-02T12:00:00Z', NULL, '2026-11-01T08:00:00Z', '2026-11-02T12:00:00Z'),
 ('01900000-0000-7000-8000-00000000a005', 'acme', '01900000-0000-7000-8000-000000000001', 10, 'canceled', 0, 0, 0,
  '2026-11-01T10:00:00Z', NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2026-11-01T10:00:00Z', '2026-11-01T11:00:00Z');
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
SELECT md5(j.id::text || n)::uuid, j.id, n, j.created_at + n * interval '1 minute',
       10 * n, CASE WHEN j.state = 'succeeded' THEN 'succeeded' ELSE 'failed' END, 500, 'boom', '\x6f6b'
FROM delivery_jobs j, generate_series(1, 2) n;
INSERT INTO pull_entries (subscription_id, event_seq) SELECT '01900000-0000-7000-8000-000000000002', seq FROM events WHERE tenant_id = 'acme';
INSERT INTO pull_cursors (subscription_id, cursor_seq) VALUES ('01900000-0000-7000-8000-000000000002', 4);
INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset, record_key, header_keys, header_values, value, received_at)
VALUES ('invalid_time', 'bad time', 'topic', 0, 100, '\x00ff', ARRAY['ce-id'::bytea], ARRAY[NULL::bytea], '\xdead', '2026-11-01T00:00:00Z'),
       ('missing_id', '', 'topic', 1, 7, NULL, '{}', '{}', '', '2026-11-03T00:00:00Z');
INSERT INTO kafka_offsets (consumer_group, topic, kafka_partition, next_offset) VALUES ('streaming-hub', 'topic', 0, 101);
`

// fingerprints are an exact digest of every converted table's rows (the
// columns of migration 1), so a conversion that loses, changes or adds a
// row shows.
var fingerprints = map[string]string{
	"events": `SELECT md5(string_agg(t::text, '|' ORDER BY seq)) FROM events t`,
	"delivery_jobs": `SELECT md5(string_agg(concat_ws(',', id, tenant_id, subscription_id, event_seq, state, attempts, recorded_attempts,
		recoveries, next_attempt_at, lease_owner, lease_until, last_error, last_status, dead_reason, dead_at, succeeded_at,
		created_at, updated_at), '|' ORDER BY id)) FROM delivery_jobs`,
	"delivery_attempts": `SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM delivery_attempts t`,
	"pull_entries":      `SELECT md5(string_agg(t::text, '|' ORDER BY event_seq)) FROM pull_entries t`,
	"pull_cursors":      `SELECT md5(string_agg(subscription_id || ':' || cursor_seq || ':' || updated_at, '|')) FROM pull_cursors`,
	"quarantine": `SELECT md5(string_agg(concat_ws(',', id, reason, detail, topic, kafka_partition, kafka_offset, record_key,
		header_keys, header_values, value, received_at), '|' ORDER BY id)) FROM quarantine`,
	"subscriptions": `SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM subscriptions t`,
	"kafka_offsets": `SELECT md5(string_agg(t::text, '|')) FROM kafka_offsets t`,
}

func fingerprint(t *testing.T, dsn string) map[string]string {
	t.Helper()
	conn := connect(t, dsn)
	out := map[string]string{}
	for table, sql := range fingerprints {
		var digest *string
		if err := conn.QueryRow(t.Context(), sql).Scan(&digest); err != nil {
			t.Fatalf("fingerprint %s: %v", table, err)
		}
		if digest == nil {
			t.Fatalf("fingerprint %s: the table is empty", table)
		}
		out[table] = *digest
	}
	return out
}

func TestStorageLifecycleMigrationKeepsEveryRow(t *testing.T) {
	t.Parallel()
	dsn := pgtest.EmptyDSN(t)
	versions := embeddedVersions(t)
	at := slices.Index(versions, 3)
	if at < 0 {
		t.Fatal("migration 3 is not embedded")
	}
	mg := newMigrator(t, dsn)
	// Fill the schema of migration 1 (v1Data is written for it), then bring
	// it to just before the storage lifecycle.
	if err := mg.To(versions[0]); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, dsn)
	if _, err := conn.Exec(t.Context(), v1Data); err != nil {
		t.Fatalf("fill the schema of migration 1: %v", err)
	}
	if err := mg.To(versions[at-1]); err != nil {
		t.Fatalf("migrate to just before migration 3 with data: %v", err)
	}
	before := fingerprint(t, dsn)

	if err := mg.To(versions[at]); err != nil {
		t.Fatalf("migrate up with data: %v", err)
	}
	if after := fingerprint(t, dsn); !maps.Equal(after, before) {
		t.Errorf("rows changed by the up migration:\n before %v\n after  %v", before, after)
	}
	// Every migrated event is known to the duplicate check, under its seq,
	// and each id day knows its highest seq.
	var ids, days, lastSeq int64
	err := conn.QueryRow(t.Context(), `
SELECT (SELECT count(*) FROM event_ids i JOIN events e USING (tenant_id, id, seq)),
       (SELECT count(*) FROM event_id_days), (SELECT max(last_seq) FROM event_id_days)`).Scan(&ids, &days, &lastSeq)
	if err != nil {
		t.Fatal(err)
	}
	if ids != 10 || days != 1 || lastSeq != 10 {
		t.Errorf("event_ids holds %d of the 10 events, event_id_days %d days up to seq %d; want 10, 1, 10", ids, days, lastSeq)
	}
	// Live jobs sit where claims look, finished ones where retention cuts.
	var live, done int64
	if err := conn.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM delivery_jobs_live), (SELECT count(*) FROM delivery_jobs_done)`).
		Scan(&live, &done); err != nil {
		t.Fatal(err)
	}
	if live != 2 || done != 3 {
		t.Errorf("live partition holds %d jobs, terminal ones %d; want 2 and 3", live, done)
	}
	// The sequences go on from where they were.
	var seq, qid int64
	err = conn.QueryRow(t.Context(), `
WITH e AS (INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                               header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
           VALUES ('acme', gen_random_uuid(), 'k', '1', 1, 's', 't', now(), '{}', '{}', '', 'topic', 0, 11) RETURNING seq),
     q AS (INSERT INTO quarantine (reason, topic, kafka_partition, kafka_offset, header_keys, header_values, value, value_size, value_sha256)
           VALUES ('missing_id', 'topic', 0, 12, '{}', '{}', '', 0, sha256('')) RETURNING id)
SELECT (SELECT seq FROM e), (SELECT id FROM q)`).Scan(&seq, &qid)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 11 || qid != 3 {
		t.Errorf("after the migration the next seq is %d and the next quarantine id %d; want 11 and 3", seq, qid)
	}
	if _, err := conn.Exec(t.Context(), `DELETE FROM events WHERE seq = 11; DELETE FROM quarantine WHERE id = 3`); err != nil {
		t.Fatal(err)
	}

	if err := mg.To(versions[at-1]); err != nil {
		t.Fatalf("migrate down with data: %v", err)
	}
	if back := fingerprint(t, dsn); !maps.Equal(back, before) {
		t.Errorf("rows changed by the round trip:\n before %v\n after  %v", before, back)
	}
	if err := mg.Up(); err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
}
