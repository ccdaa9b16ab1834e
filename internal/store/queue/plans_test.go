package queue

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

const day = 24 * time.Hour

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

// nothingInFlight sets the ingest horizon readHorizon keeps for a claim or
// a pull page past every seq, as when no batch is being ingested. (The
// horizon the function would read is no use here: the seeds write seqs
// without the sequence.)
var nothingInFlight = fmt.Sprintf("hubctl.ingest_horizon = '%d'", int64(math.MaxInt64))

func explain(t *testing.T, st *testStore, analyze bool, sql string, args ...any) string {
	t.Helper()
	return explainWith(t, st, analyze, "", sql, args...)
}

// explainWith is explain with one more setting in force (SET LOCAL).
func explainWith(t *testing.T, st *testStore, analyze bool, setting, sql string, args ...any) string {
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
	if setting != "" {
		if _, err := tx.Exec(context.Background(), `SET LOCAL `+setting); err != nil {
			t.Fatal(err)
		}
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

	yesterday, today, tomorrow := now.Add(-day).UTC().Format("20060102"), now.UTC().Format("20060102"), now.Add(day).UTC().Format("20060102")

	// A claim walks the jobs' due indexes, never a whole partition, and
	// reads of the inbox only the partitions of the events it claimed
	// (the oldest due: never tomorrow's).
	claimPlan := explainWith(t, st, true, nothingInFlight, claimJobs, pgx.StrictNamedArgs{
		"after": "", "ring_size": ClaimRingSize, "now": now.Add(time.Hour), "limit": 64, "owner": "owner", "lease_margin_ms": int64(1000), "skip": []string{},
	})
	for _, d := range []string{yesterday, today, tomorrow} {
		if strings.Contains(claimPlan, "Seq Scan on delivery_jobs_p"+d) {
			t.Errorf("the claim plan reads the whole partition of jobs of %s:\n%s", d, claimPlan)
		}
	}
	if !strings.Contains(claimPlan, "Index Only Scan using delivery_jobs_p"+today+"_tenant_id_next_attempt_at_event_seq_idx") {
		t.Errorf("the claim's ring does not walk the due index:\n%s", claimPlan)
	}
	assertNeverExecuted(t, "claim", claimPlan, "events_p"+tomorrow)

	// Recording successes updates the jobs in their own day's partition,
	// and the other days are pruned before it runs (by the planner of a
	// custom plan, at executor start for this generic one), not planned
	// with their indexes and skipped: planning a week of day partitions
	// cost more than running the statement.
	var jobID [16]byte
	if err := st.Pool.QueryRow(context.Background(), `SELECT id FROM delivery_jobs WHERE id >= $1::uuid ORDER BY id LIMIT 1`,
		pg.UUIDAt(pg.DayStart(now))).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	successPlan := explain(t, st, true, recordSuccesses, pgx.StrictNamedArgs{
		"ids": [][16]byte{jobID}, "job_ids": [][16]byte{jobID}, "owners": []string{"owner"}, "started": []time.Time{now},
		"finished": []time.Time{now}, "durations_ms": []int64{1}, "statuses": []*int32{nil}, "errors": []*string{nil},
		"responses": [][]byte{nil},
	})
	if !strings.Contains(successPlan, " on delivery_jobs_p"+today+" ") {
		t.Errorf("recording a success does not update the job's own day's partition:\n%s", successPlan)
	}
	for _, d := range []string{yesterday, tomorrow} {
		if strings.Contains(successPlan, "delivery_jobs_p"+d) {
			t.Errorf("recording a success plans the jobs of %s, a day none of its jobs is in:\n%s", d, successPlan)
		}
	}

	// The backlog reading and retention's check for jobs that pin a day
	// of events have an index for every partition: with sequential scans
	// priced out, none reads a partition of jobs whole. (The test's
	// partitions are small enough that the planner would scan them
	// anyway; what matters is that a partial index applies.)
	backlogByTenant, err := os.ReadFile("../oncall/sql/backlog_by_tenant.sql")
	if err != nil {
		t.Fatal(err)
	}
	eventsPinned, err := os.ReadFile("../lifecycle/sql/events_pinned.sql")
	if err != nil {
		t.Fatal(err)
	}
	for what, sql := range map[string]string{"the backlog reading": string(backlogByTenant), "the pinned check": string(eventsPinned)} {
		args := []any{pgx.NamedArgs{"now": now}}
		if sql == string(eventsPinned) {
			args = []any{pgx.StrictNamedArgs{"lo": pg.DaySeqBase(now.Add(-day)), "hi": pg.DaySeqBase(now)}}
		}
		plan := explainWith(t, st, false, "enable_seqscan = off", sql, args...)
		for _, d := range []string{yesterday, today, tomorrow} {
			if strings.Contains(plan, "Seq Scan on delivery_jobs_p"+d) {
				t.Errorf("%s reads the whole partition of jobs of %s:\n%s", what, d, plan)
			}
		}
	}

	// A pull page starts at the cursor and stops at the page's end.
	pagePlan := explainWith(t, st, true, nothingInFlight, selectPage, pgx.StrictNamedArgs{"subscription_id": pull, "limit": 100, "after": nil})
	assertNeverExecuted(t, "pull page", pagePlan, "events_p"+tomorrow, "pull_entries_p"+tomorrow)
}

// The handover's check for tenants with due jobs plans no job partition:
// the probe is the function's (migration 26), whose plan the session keeps,
// so a small batch does not plan every day partition with its indexes.
func TestTheDueJobsCheckPlansNoJobPartition(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	plan := explain(t, st, false, selectBlockedTenants, pgx.StrictNamedArgs{"tenants": []string{"t-a", "t-b"}})
	if strings.Contains(plan, "delivery_jobs") {
		t.Errorf("the due-jobs check plans the jobs' partitions itself instead of calling the function:\n%s", plan)
	}
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
			if head := strings.TrimSpace(line); strings.HasPrefix(head, "Update on ") || strings.HasPrefix(head, "Delete on ") {
				continue // a target the statement may write, not a read
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

// A round of successes joins its attempts to their jobs by hash, not by
// comparing every job with every attempt, the nested loop the planner
// chooses when the in-flight state is a constant.
func TestRecordingARoundOfSuccessesIsLinearInItsSize(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	now := time.Now()
	push, _ := seedDays(t, st, now)
	ctx := context.Background()
	// A day of jobs as a busy hub holds it: most finished, a few hundred
	// in flight, of which the round records 173.
	if _, err := st.Pool.Exec(ctx, `
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, lease_owner, lease_until, succeeded_at, updated_at)
SELECT (lpad(to_hex((extract(epoch FROM $1::timestamptz) * 1000)::bigint), 12, '0')
        || substr(replace(gen_random_uuid()::text, '-', ''), 13))::uuid, 'acme', $2, $3::bigint + g % 500,
       CASE WHEN g % 100 = 0 THEN 'in_flight' ELSE 'succeeded' END,
       CASE WHEN g % 100 = 0 THEN 'owner' END, CASE WHEN g % 100 = 0 THEN now() + interval '1 minute' END,
       CASE WHEN g % 100 <> 0 THEN now() END, $1
FROM generate_series(1, 50000) g`, now, push, pg.DaySeqBase(now)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `ANALYZE delivery_jobs`); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Pool.Query(ctx, `SELECT id FROM delivery_jobs WHERE state = 'in_flight' ORDER BY id LIMIT 173`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[[16]byte])
	if err != nil {
		t.Fatal(err)
	}
	n := len(ids)
	owners, started, durations := make([]string, n), make([]time.Time, n), make([]int64, n)
	statuses, errs, responses, attemptIDs := make([]*int32, n), make([]*string, n), make([][]byte, n), make([][16]byte, n)
	for i := range ids {
		owners[i], started[i], durations[i] = "owner", now, 1
		attemptIDs[i] = [16]byte(uuid.Must(uuid.NewV7()))
	}
	plan := explainGeneric(t, st, recordSuccesses, pgx.StrictNamedArgs{
		"ids": attemptIDs, "job_ids": ids, "owners": owners, "started": started, "finished": started,
		"durations_ms": durations, "statuses": statuses, "errors": errs, "responses": responses,
	})
	if strings.Contains(plan, "Rows Removed by Join Filter") {
		t.Errorf("recording %d successes compares jobs with attempts one by one:\n%s", n, plan)
	}
	// Owned successes, each folded into its job: no attempt row.
	if !strings.Contains(plan, fmt.Sprintf("CTE Scan on owned (actual rows=%d loops=1)", n)) {
		t.Errorf("the round did not record %d attempts:\n%s", n, plan)
	}
}

// explainGeneric explains sql as the hub runs it once its statement cache
// has settled: prepared, with the generic plan, the arguments bound at
// execution. (explain binds them at planning, which lets the planner see
// them as constants.)
func explainGeneric(t *testing.T, st *testStore, sql string, args pgx.StrictNamedArgs) string {
	t.Helper()
	return explainGenericWith(t, st, "", sql, args)
}

// explainGenericWith is explainGeneric with one more setting in force (SET
// LOCAL).
func explainGenericWith(t *testing.T, st *testStore, setting, sql string, args pgx.StrictNamedArgs) string {
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
	if setting != "" {
		if _, err := tx.Exec(ctx, `SET LOCAL `+setting); err != nil {
			t.Fatal(err)
		}
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

// The readers of attempts that read them through all_delivery_attempts
// (migration 25) reach both of its branches by index, as their own copies
// of it did: the attempt rows by their primary key or (job_id, attempt),
// the successes folded into their jobs by the jobs' primary key or the
// partial index on the folded id. A reader whose condition stopped
// reaching a branch would hash or scan every job of every day instead.
func TestAttemptReadersReachRowsAndFoldedSuccessesByIndex(t *testing.T) {
	t.Parallel()
	st := ingestStore(t)
	ctx := context.Background()
	now := time.Now()
	seedDays(t, st, now)
	// Each succeeded job's attempt folded into it, and a failed attempt
	// row for each pending one, both started the day the job was.
	if _, err := st.Pool.Exec(ctx, `
WITH folded AS (
    UPDATE delivery_jobs SET attempts = 1, recorded_attempts = 1, last_status = 200, succeeded_attempt_id = gen_random_uuid(),
        succeeded_attempt = 1, succeeded_started_at = updated_at, succeeded_duration_ms = 12
    WHERE state = 'succeeded')
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error)
SELECT gen_random_uuid(), id, 1, updated_at, 30, 'failed', 503, 'HTTP 503' FROM delivery_jobs WHERE state = 'pending'`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `ANALYZE delivery_jobs, delivery_attempts`); err != nil {
		t.Fatal(err)
	}
	yesterday, today, tomorrow := now.Add(-day).UTC().Format("20060102"), now.UTC().Format("20060102"), now.Add(day).UTC().Format("20060102")
	var (
		foldedJob, rowJob, foldedID, rowID [16]byte
		foldedStart, rowStart              time.Time
	)
	if err := st.Pool.QueryRow(ctx, `
SELECT j.id, j.succeeded_attempt_id, j.succeeded_started_at FROM delivery_jobs j
WHERE j.succeeded_attempt_id IS NOT NULL AND j.id >= $1::uuid ORDER BY j.id LIMIT 1`, pg.UUIDAt(pg.DayStart(now))).Scan(&foldedJob, &foldedID, &foldedStart); err != nil {
		t.Fatal(err)
	}
	if err := st.Pool.QueryRow(ctx, `
SELECT a.job_id, a.id, a.started_at FROM delivery_attempts a
WHERE a.started_at >= $1 ORDER BY a.started_at LIMIT 1`, pg.DayStart(now)).Scan(&rowJob, &rowID, &rowStart); err != nil {
		t.Fatal(err)
	}
	readSQL := func(name string) string {
		sql, err := os.ReadFile("../catalog/sql/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(sql)
	}
	// The indexes of today's partitions, where the attempts read are.
	rowsByJob := "delivery_attempts_p" + today + "_job_id_attempt_idx"
	rowsByID := "delivery_attempts_p" + today + "_pkey"
	jobsByID := "delivery_jobs_p" + today + "_pkey"
	foldedByID := "delivery_jobs_p" + today + "_succeeded_attempt_id_idx"
	for _, tc := range []struct {
		name  string
		sql   string
		args  pgx.StrictNamedArgs
		want  []string
		never []string // partitions pruned at run time
	}{
		{"the attempts of an event's deliveries", readSQL("attach_attempts.sql"),
			pgx.StrictNamedArgs{"ids": [][16]byte{foldedJob, rowJob}}, []string{rowsByJob, jobsByID}, nil},
		{"a delivery with its attempts", readSQL("get_delivery.sql"),
			pgx.StrictNamedArgs{"id": foldedJob, "tenant_id": "acme"}, []string{rowsByJob, jobsByID}, nil},
		{"the job of a folded attempt", readSQL("job_of_attempt.sql"),
			pgx.StrictNamedArgs{"attempt_id": foldedID, "tenant_id": "acme"}, []string{rowsByID, foldedByID, jobsByID}, nil},
		{"the job of an attempt row", readSQL("job_of_attempt.sql"),
			pgx.StrictNamedArgs{"attempt_id": rowID, "tenant_id": "acme"}, []string{rowsByID, foldedByID, jobsByID}, nil},
		{"attempts already recorded", alreadyRecordedSQL,
			pgx.StrictNamedArgs{"ids": [][16]byte{foldedID, rowID}, "started": []time.Time{foldedStart, rowStart}}, []string{rowsByID, foldedByID},
			// Both attempts started today: their start prunes the other
			// days' attempt partitions.
			[]string{"delivery_attempts_p" + yesterday, "delivery_attempts_p" + tomorrow}},
	} {
		// With sequential scans priced out, as the test's partitions are
		// small enough to scan whole: what matters is that an index
		// applies to each branch.
		plan := explainGenericWith(t, st, "enable_seqscan = off", tc.sql, tc.args)
		for _, want := range tc.want {
			if !strings.Contains(plan, " "+want+" ") {
				t.Errorf("%s: the plan does not use %s:\n%s", tc.name, want, plan)
			}
		}
		for _, d := range []string{yesterday, today, tomorrow} {
			for _, table := range []string{"delivery_jobs_p", "delivery_attempts_p"} {
				if strings.Contains(plan, "Seq Scan on "+table+d) {
					t.Errorf("%s reads the whole partition %s%s:\n%s", tc.name, table, d, plan)
				}
			}
		}
		if strings.Contains(plan, "Hash") {
			t.Errorf("%s hashes a whole table instead of looking its attempts up:\n%s", tc.name, plan)
		}
		if len(tc.never) > 0 {
			assertNeverExecuted(t, tc.name, plan, tc.never...)
		}
	}
}
