package store

import (
	"context"
	"errors"
	"maps"
	"testing"
)

// seedTenant stores one of everything a tenant can own: events (with their
// ids), jobs in every state with attempts, a pull subscription with entries
// and a cursor, an API key, and a quarantined record naming the tenant in
// its tenantid header.
func seedTenant(t *testing.T, st *Store, tenant string) {
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
	} {
		if _, err := st.Pool.Exec(ctx, sql, tenant); err != nil {
			t.Fatalf("seed tenant %s: %v\n%s", tenant, err, sql)
		}
	}
}

// tenantRows counts a tenant's rows in every table a purge touches.
func tenantRows(t *testing.T, st *Store, tenant string) map[string]int64 {
	t.Helper()
	counts := map[string]int64{}
	for table, sql := range map[string]string{
		"tenants":           `SELECT count(*) FROM tenants WHERE id = $1`,
		"tenant_api_keys":   `SELECT count(*) FROM tenant_api_keys WHERE tenant_id = $1`,
		"subscriptions":     `SELECT count(*) FROM subscriptions WHERE tenant_id = $1`,
		"events":            `SELECT count(*) FROM events WHERE tenant_id = $1`,
		"event_ids":         `SELECT count(*) FROM event_ids WHERE tenant_id = $1`,
		"delivery_jobs":     `SELECT count(*) FROM delivery_jobs WHERE tenant_id = $1`,
		"delivery_attempts": `SELECT count(*) FROM delivery_attempts a JOIN delivery_jobs j ON j.id = a.job_id WHERE j.tenant_id = $1`,
		"pull_entries":      `SELECT count(*) FROM pull_entries p JOIN subscriptions s ON s.id = p.subscription_id WHERE s.tenant_id = $1`,
		"pull_cursors":      `SELECT count(*) FROM pull_cursors p JOIN subscriptions s ON s.id = p.subscription_id WHERE s.tenant_id = $1`,
		"quarantine":        `SELECT count(*) FROM quarantine WHERE convert_to($1, 'UTF8') = ANY (header_values)`,
	} {
		counts[table] = queryCount(t, st, sql, tenant)
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
			t.Fatalf("seed left globex without %s rows", table)
		}
	}
	acme := tenantRows(t, st, "acme")

	counts, err := st.PurgeTenant(context.Background(), "acme")
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

	if _, err := st.PurgeTenant(context.Background(), "acme"); !errors.Is(err, ErrNotFound) {
		t.Errorf("purging a tenant that is gone: %v, want ErrNotFound", err)
	}
}
