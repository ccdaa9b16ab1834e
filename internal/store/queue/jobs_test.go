package queue

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/autodisable"
)

const testLeaseMargin = 15 * time.Second

// insertJobs stores n events of tenant and one job per event for the
// subscription, due at due, in one statement; it returns the job ids in
// event order.
func insertJobs(t testing.TB, st *testStore, tenant, subscriptionID string, n int, due time.Time) []uuid.UUID {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(), `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        traceparent, header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.2.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           '2026-01-02T03:04:05Z', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '{}', '{}',
           convert_to('{"n":' || g || '}', 'UTF8'), 'topic', 0, g
    FROM generate_series(1, $3) g
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, next_attempt_at)
SELECT gen_random_uuid(), $1, $2, seq, $4 FROM ev ORDER BY seq
RETURNING id`, tenant, subscriptionID, n, due)
	if err != nil {
		t.Fatalf("insert jobs: %v", err)
	}
	var ids []uuid.UUID
	var id uuid.UUID
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { ids = append(ids, id); return nil }); err != nil {
		t.Fatalf("insert jobs: %v", err)
	}
	return ids
}

func claim(t *testing.T, st *testStore, owner string, limit int, after string) ClaimResult {
	t.Helper()
	res, err := st.Claim(context.Background(), ClaimRequest{Owner: owner, Limit: limit, Now: time.Now(), After: after, LeaseMargin: testLeaseMargin})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return res
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

func jobIDs(jobs []ClaimedJob) []uuid.UUID {
	ids := make([]uuid.UUID, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func tenantsOf(jobs []ClaimedJob) []string {
	var tenants []string
	for _, j := range jobs {
		tenants = append(tenants, j.TenantID)
	}
	slices.Sort(tenants)
	return tenants
}

// claimOne makes a subscription with one due job and claims it.
func claimOne(t *testing.T, st *testStore, owner string) (ClaimedJob, string) {
	t.Helper()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	insertJobs(t, st, "acme", sub, 1, time.Now().Add(-time.Second))
	res := claim(t, st, owner, 1, "")
	if len(res.Jobs) != 1 {
		t.Fatalf("claimed %d jobs, want 1", len(res.Jobs))
	}
	return res.Jobs[0], sub
}

func attemptOf(job ClaimedJob, owner string, ok bool, status int) Attempt {
	return Attempt{
		JobID: job.ID, SubscriptionID: job.SubscriptionID, Owner: owner, DeliveryID: uuid.Must(uuid.NewV7()),
		StartedAt: time.Now(), Duration: 12 * time.Millisecond, OK: ok, StatusCode: status,
		Response: []byte("answer"), OrderingKey: job.OrderingKey,
	}
}

var noAutoDisable = autoDisableBy(autodisable.Policy{Enabled: false, Window: time.Hour, Spread: time.Hour})

// autoDisableBy is policy as Complete asks for it, as the dispatcher passes it.
func autoDisableBy(policy autodisable.Policy) AutoDisable {
	return func(span FailureSpan, finished time.Time) (FailureSpan, bool) {
		next, disable := policy.OnFailure(autodisable.Span(span), finished)
		return FailureSpan(next), disable
	}
}

type spanRow struct {
	FailingSince, LastFailureAt *time.Time
	Enabled                     bool
	DisabledReason              *string
}

func readSpan(t *testing.T, st *testStore, sub string) spanRow {
	t.Helper()
	var s spanRow
	err := st.Pool.QueryRow(context.Background(), `SELECT failing_since, last_failure_at, enabled, disabled_reason FROM subscriptions WHERE id = $1`,
		sub).Scan(&s.FailingSince, &s.LastFailureAt, &s.Enabled, &s.DisabledReason)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
