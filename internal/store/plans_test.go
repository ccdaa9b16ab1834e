package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// seedDays puts events with pending and finished jobs, and pull entries,
// into three daily partitions (yesterday, today, tomorrow), as retention
// leaves them when traffic spans days.
func seedDays(t *testing.T, st *Store, now time.Time) (push, pull string) {
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
		base := DaySeqBase(now.Add(time.Duration(k) * day))
		_, err := st.Pool.Exec(ctx, `
WITH ev AS (
    INSERT INTO events (seq, tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT $1::bigint + g, 'acme', gen_random_uuid(), 'transaction.posted', '1.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), '{}', '{}', '\x7b7d', 'topic', 0, g
    FROM generate_series(0, 499) g RETURNING seq),
 pe AS (INSERT INTO pull_entries (subscription_id, event_seq) SELECT $3, seq FROM ev)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, succeeded_at, updated_at)
SELECT gen_random_uuid(), 'acme', $2, seq, CASE WHEN seq % 10 = 0 THEN 'pending' ELSE 'succeeded' END,
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

func explain(t *testing.T, st *Store, analyze bool, sql string, args ...any) string {
	t.Helper()
	opts := "(COSTS OFF)"
	if analyze {
		opts = "(ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)"
	}
	tx, err := st.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	// The plan a prepared statement gets after its first runs: generic,
	// so partitions must be pruned at run time, not by the planner seeing
	// constants.
	if _, err := tx.Exec(context.Background(), `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(context.Background(), "EXPLAIN "+opts+" "+sql, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPlansOfHotPathsTouchOnlyThePartitionsTheyNeed(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	now := time.Now()
	_, pull := seedDays(t, st, now)

	tomorrow := now.Add(day).UTC().Format("20060102")

	// A claim reads the live partition's partial index only, and of the
	// inbox only the partitions of the events it claimed (the oldest due:
	// never tomorrow's).
	claimPlan := explain(t, st, true, claimJobs, pgx.StrictNamedArgs{
		"after": "", "ring_size": ClaimRingSize, "now": now.Add(time.Hour), "limit": 64, "owner": "owner", "lease_margin_ms": int64(1000),
	})
	if strings.Contains(claimPlan, "delivery_jobs_done") {
		t.Errorf("the claim plan reads terminal jobs:\n%s", claimPlan)
	}
	if !strings.Contains(claimPlan, "Index Only Scan using delivery_jobs_due on delivery_jobs_live") {
		t.Errorf("the claim's ring does not walk the live partition's due index:\n%s", claimPlan)
	}
	assertNeverExecuted(t, "claim", claimPlan, "events_p"+tomorrow)

	// A pull page starts at the cursor and stops at the page's end.
	pagePlan := explain(t, st, true, selectPage, pull, 100, nil)
	assertNeverExecuted(t, "pull page", pagePlan, "events_p"+tomorrow, "pull_entries_p"+tomorrow)
}

// assertNeverExecuted checks that every plan node on the named partitions
// was skipped at run time.
func assertNeverExecuted(t *testing.T, what, plan string, partitions ...string) {
	t.Helper()
	for _, part := range partitions {
		seen := false
		for _, line := range strings.Split(plan, "\n") {
			if !strings.Contains(line, " on "+part+" ") {
				continue
			}
			seen = true
			if !strings.Contains(line, "(never executed)") {
				t.Errorf("%s reads %s, which holds nothing it needs:\n%s", what, part, plan)
			}
		}
		if !seen {
			t.Errorf("%s plan does not show %s at all (was the test data put there?):\n%s", what, part, plan)
		}
	}
}
