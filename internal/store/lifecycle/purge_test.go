package lifecycle

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// seedTenant stores one of everything a tenant can own: events (with their
// ids), jobs in every state with attempts, a pull subscription with entries
// and a cursor, a push subscription's rate limiter, an API key, an open
// breaker, a portal link and session, Idempotency-Keys of its own and of the admin acting on it, and
// a quarantined record naming the tenant in its tenantid header.
func seedTenant(t *testing.T, st *testStore, tenant string) {
	t.Helper()
	push := addTestSubscription(t, st, tenant, "webhook", []string{"transaction.posted"})
	pull := addTestSubscription(t, st, tenant, "pull", []string{"transaction.posted"})
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO pull_cursors (subscription_id) SELECT $2::uuid WHERE $1::text IS NOT NULL AND $3::uuid IS NOT NULL`,
		`WITH ev AS (
		    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
		                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
		    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.0', 1, 'midaz', 'studio.lerian.transaction.posted',
		           now(), '{}', '{}', '\x7b7d', 'topic', 0, g
		    FROM generate_series(1, 5) g
		    RETURNING seq, id),
		 ids AS (INSERT INTO event_ids (tenant_id, id, seq) SELECT $1, id, seq FROM ev),
		 entries AS (INSERT INTO pull_entries (subscription_id, event_seq) SELECT $2, seq FROM ev)
		INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, lease_until, dead_reason, dead_at)
		SELECT gen_random_uuid(), $1, $3, seq, s.state,
		       CASE WHEN s.state = 'in_flight' THEN now() END,
		       CASE WHEN s.state = 'dead' THEN 'exhausted' END,
		       CASE WHEN s.state = 'dead' THEN now() END
		FROM (SELECT seq, row_number() OVER (ORDER BY seq) AS n FROM ev) e
		JOIN (VALUES (1, 'pending'), (2, 'in_flight'), (3, 'succeeded'), (4, 'dead'), (5, 'canceled')) s (n, state) USING (n)`,
		`INSERT INTO subscription_rates (subscription_id, tat, busy_since) SELECT $3, now(), now() WHERE $1::text IS NOT NULL AND $2::uuid IS NOT NULL`,
		`INSERT INTO dead_letter_reports (subscription_id, reason, tenant_id, window_start, dead, event_ids)
		 SELECT $3, 'exhausted', $1, now(), 1, ARRAY[gen_random_uuid()] WHERE $2::uuid IS NOT NULL`,
		`INSERT INTO operational_outbox (seq, tenant_id, id, event_key, type, subject, time, payload)
		 SELECT max(seq), $1, gen_random_uuid(), 'hub.subscription_created', 'studio.lerian.hub.subscription_created', $3::text, now(), '{}'
		 FROM events WHERE tenant_id = $1 AND $2::uuid IS NOT NULL`,
	} {
		if _, err := st.Pool.Exec(ctx, sql, tenant, pull, push); err != nil {
			t.Fatalf("seed tenant %s: %v\n%s", tenant, err, sql)
		}
	}
	for _, sql := range []string{
		`INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome)
		 SELECT gen_random_uuid(), id, 1, now(), 5, 'failed' FROM delivery_jobs WHERE tenant_id = $1`,
		`INSERT INTO tenant_api_keys (id, tenant_id, name, token_hash, token_prefix)
		 VALUES (gen_random_uuid(), $1, 'ci', sha256(convert_to($1, 'UTF8')), 'hub_x')`,
		`INSERT INTO quarantine (reason, topic, kafka_partition, kafka_offset, header_keys, header_values, value, value_size, value_sha256)
		 VALUES ('invalid_time', 'topic', 0, length($1), ARRAY['CE_TenantId'::bytea], ARRAY[convert_to($1, 'UTF8')], '\x00', 1, sha256('\x00'))`,
		`INSERT INTO hub_instances (owner, role, version, started_at, heartbeat_at) VALUES ('hub-' || $1, 'serve', 'test', now(), now())`,
		`INSERT INTO breaker_states (owner, tenant_id, destination, state, open_until) VALUES ('hub-' || $1, $1, 'https://example.com:443', 'open', now())`,
		`INSERT INTO portal_links (token_hash, tenant_id, read_only, created_at, expires_at)
		 VALUES (sha256(convert_to('link ' || $1, 'UTF8')), $1, false, now(), now() + interval '1 hour')`,
		`INSERT INTO portal_sessions (id, token_hash, tenant_id, read_only, created_at, expires_at)
		 VALUES (gen_random_uuid(), sha256(convert_to('session ' || $1, 'UTF8')), $1, false, now(), now() + interval '1 hour')`,
	} {
		if _, err := st.Pool.Exec(ctx, sql, tenant); err != nil {
			t.Fatalf("seed tenant %s: %v\n%s", tenant, err, sql)
		}
	}
	now := time.Now()
	for _, scope := range []string{"tenant:" + tenant, "admin"} {
		if _, _, err := st.ClaimIdempotencyKey(ctx, scope, "create-"+tenant, tenant, []byte("f"), now, now.Add(-time.Hour), now); err != nil {
			t.Fatalf("seed tenant %s: %v", tenant, err)
		}
	}
}

// tablesWithoutTenantRows are the tables that hold nothing of any tenant.
// Every other table must be reachable from a tenant by a column
// tenantRows knows, so a table added later is either purged or listed
// here on purpose.
var tablesWithoutTenantRows = []string{"schema_migrations", "kafka_offsets", "event_id_days", "hub_instances"}

// tenantRows counts a tenant's rows in every table of the schema (the
// parents of partitioned tables, so every partition is counted): by its
// tenant_id column, else by the tenant's subscriptions or jobs it points
// at. Quarantine names the tenant in a header and tenants is the tenant
// itself. A table reachable by none of these fails the test.
func tenantRows(t *testing.T, st *testStore, tenant string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	rows, err := st.Pool.Query(ctx, `
		SELECT c.relname, array_agg(a.attname::text ORDER BY a.attname)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
		GROUP BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	columns := map[string][]string{}
	var (
		table string
		cols  []string
	)
	if _, err := pgx.ForEachRow(rows, []any{&table, &cols}, func() error {
		columns[table] = cols
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ofTenant := map[string]string{
		"subscription_id": `subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = $1)`,
		"job_id":          `job_id IN (SELECT id FROM delivery_jobs WHERE tenant_id = $1)`,
	}
	counts := map[string]int64{}
	for table, cols := range columns {
		if slices.Contains(tablesWithoutTenantRows, table) {
			continue
		}
		var where string
		switch {
		case table == "tenants":
			where = `id = $1`
		case table == "quarantine":
			where = `convert_to($1, 'UTF8') = ANY (header_values)`
		case slices.Contains(cols, "tenant_id"):
			where = `tenant_id = $1`
		case slices.Contains(cols, "subscription_id"):
			where = ofTenant["subscription_id"]
		case slices.Contains(cols, "job_id"):
			where = ofTenant["job_id"]
		default:
			t.Fatalf("table %s has no column that says which tenant a row is of: purge it and count it here, or list it in tablesWithoutTenantRows", table)
		}
		counts[table] = queryCount(t, st, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+` WHERE `+where, tenant)
	}
	return counts
}

func TestPurgeTenantRemovesEveryRowOfThatTenantAndNothingElse(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	// Partitions of today exist, so rows spread over daily and catch-all
	// partitions alike.
	if err := st.EnsurePartitions(context.Background(), nowUTC()); err != nil {
		t.Fatal(err)
	}
	seedTenant(t, st, "acme")
	seedTenant(t, st, "globex")
	before := tenantRows(t, st, "globex")
	for table, n := range before {
		if n == 0 {
			t.Errorf("seedTenant writes no %s row: seed one, so the test shows the purge removes them", table)
		}
	}
	acme := tenantRows(t, st, "acme")

	counts, err := st.PurgeTenant(context.Background(), "acme", nil)
	if err != nil {
		t.Fatalf("PurgeTenant: %v", err)
	}
	removed := map[string]int64{}
	for _, c := range counts {
		removed[c.Table] = c.Rows
	}
	if !maps.Equal(removed, acme) {
		t.Errorf("purge counted %v, want what acme had: %v", removed, acme)
	}
	for table, n := range tenantRows(t, st, "acme") {
		if n != 0 {
			t.Errorf("after the purge acme still has %d %s rows", n, table)
		}
	}
	if after := tenantRows(t, st, "globex"); !maps.Equal(after, before) {
		t.Errorf("globex's rows changed with acme's purge:\n before %v\n after  %v", before, after)
	}

	if _, err := st.PurgeTenant(context.Background(), "acme", nil); !errors.Is(err, pg.ErrNotFound) {
		t.Errorf("purging a tenant that is gone: %v, want pg.ErrNotFound", err)
	}
}
