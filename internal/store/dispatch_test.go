package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

const testLeaseMargin = 15 * time.Second

// insertJobs stores n events of tenant and one job per event for the
// subscription, due at due, in one statement; it returns the job ids in
// event order.
func insertJobs(t *testing.T, st *Store, tenant, subscriptionID string, n int, due time.Time) []uuid.UUID {
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

func claim(t *testing.T, st *Store, owner string, limit int, after string) ClaimResult {
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

func readJob(t *testing.T, st *Store, id uuid.UUID) jobRow {
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

func TestClaimLeasesDueJobsWithWhatAnAttemptNeeds(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ids := insertJobs(t, st, "acme", sub, 3, time.Now().Add(-time.Second))
	insertJobs(t, st, "acme", sub, 1, time.Now().Add(time.Hour)) // not due

	before := time.Now()
	res := claim(t, st, "worker-1", 2, "")
	if len(res.Jobs) != 2 || res.Jobs[0].ID != ids[0] || res.Jobs[1].ID != ids[1] {
		t.Fatalf("claimed %v, want the two oldest of %v", jobIDs(res.Jobs), ids)
	}
	if res.Resume != "acme" || res.Canceled+res.Disabled+res.Orphaned != 0 {
		t.Errorf("summary = %+v, want resume acme and nothing settled", res)
	}
	j := res.Jobs[0]
	if j.SubscriptionID.String() != sub || j.TenantID != "acme" || j.SubscriptionUpdatedAt.IsZero() {
		t.Errorf("job names tenant %q, subscription %s of %v", j.TenantID, j.SubscriptionID, j.SubscriptionUpdatedAt)
	}
	// Dispatch reads the subscription the claim names, secrets sealed.
	subs, err := st.SubscriptionsByID(context.Background(), []uuid.UUID{j.SubscriptionID, uuid.New()})
	if err != nil || len(subs) != 1 {
		t.Fatalf("SubscriptionsByID = %d rows, %v; want the one that exists", len(subs), err)
	}
	if s := subs[0]; s.ID != j.SubscriptionID || s.TenantID != "acme" || s.SigningSecret != "encrypted-secret" ||
		s.AttemptTimeout != 10*time.Second || s.SinkType != "webhook" || !s.UpdatedAt.Equal(j.SubscriptionUpdatedAt) {
		t.Errorf("subscription = %+v", s)
	}
	e := j.Event
	if string(e.Payload) != `{"n":1}` || e.Key != "transaction.posted" || e.SchemaVersion != "1.2.0" || e.Source != "midaz" ||
		e.Type != "studio.lerian.transaction.posted" || e.TraceParent == "" || e.TraceState != "" || e.DataContentType != "" ||
		!e.Time.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || e.ReceivedAt.IsZero() || len(e.ID) != 36 {
		t.Errorf("event = %+v", e)
	}
	wantLease := before.Add(10*time.Second + testLeaseMargin)
	if j.LeaseUntil.Before(wantLease) || j.LeaseUntil.After(wantLease.Add(5*time.Second)) {
		t.Errorf("lease until %v, want about %v", j.LeaseUntil, wantLease)
	}
	if row := readJob(t, st, j.ID); row.State != JobInFlight || row.LeaseOwner == nil || *row.LeaseOwner != "worker-1" {
		t.Errorf("job row = %+v, want in_flight leased to worker-1", row)
	}

	if res := claim(t, st, "worker-1", 5, ""); len(res.Jobs) != 1 || res.Jobs[0].ID != ids[2] {
		t.Errorf("second claim = %v, want only %v", jobIDs(res.Jobs), ids[2])
	}
	if res := claim(t, st, "worker-1", 5, ""); len(res.Jobs) != 0 || res.Resume != "acme" {
		t.Errorf("third claim = %v resume %q, want nothing, resume acme", jobIDs(res.Jobs), res.Resume)
	}
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

func TestClaimInterleavesTenants(t *testing.T) {
	st := ingestStore(t)
	due := time.Now().Add(-time.Second)
	for tenant, n := range map[string]int{"a-noisy": 200, "b-quiet": 2, "c-quiet": 1} {
		insertJobs(t, st, tenant, addTestSubscription(t, st, tenant, "webhook", []string{"*"}), n, due)
	}

	// One batch is shared equally among the tenants with due work: two
	// each, though c-quiet has only one, so the backlog cannot fill it.
	res := claim(t, st, "w", 6, "")
	if got := tenantsOf(res.Jobs); !slices.Equal(got, []string{"a-noisy", "a-noisy", "b-quiet", "b-quiet", "c-quiet"}) {
		t.Errorf("batch of 6 went to %v", got)
	}
	insertJobs(t, st, "b-quiet", addTestSubscription(t, st, "b-quiet", "webhook", []string{"*"}), 1, due)

	// Claims of one job rotate through the tenants instead of draining
	// the first one's backlog.
	var served []string
	after := res.Resume
	for range 4 {
		res := claim(t, st, "w", 1, after)
		served = append(served, tenantsOf(res.Jobs)...)
		after = res.Resume
	}
	if !slices.Contains(served, "b-quiet") {
		t.Errorf("claims of one job served %v; the quiet tenant's new job waited behind the backlog", served)
	}
}

func TestClaimReachesTenantsBeyondTheRing(t *testing.T) {
	st := ingestStore(t)
	// More tenants than one ring holds, none of them due, then one that is.
	sub := addTestSubscription(t, st, "t", "webhook", []string{"*"})
	_, err := st.Pool.Exec(context.Background(), `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT 'idle-' || lpad(g::text, 5, '0'), gen_random_uuid(), 'k.v', '1', 1, 's', 't', now(), '{}', '{}', '', 'x', 0, g
    FROM generate_series(1, $2) g
    RETURNING seq, tenant_id)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, next_attempt_at)
SELECT gen_random_uuid(), tenant_id, $1, seq, now() + interval '1 hour' FROM ev`, sub, ClaimRingSize+10)
	if err != nil {
		t.Fatal(err)
	}
	want := insertJobs(t, st, "zz-due", addTestSubscription(t, st, "zz-due", "webhook", []string{"*"}), 1, time.Now().Add(-time.Second))

	first := claim(t, st, "w", 4, "")
	if len(first.Jobs) != 0 || first.Resume == "" {
		t.Fatalf("first claim = %v resume %q, want nothing and a resume point inside the idle tenants", jobIDs(first.Jobs), first.Resume)
	}
	second := claim(t, st, "w", 4, first.Resume)
	if len(second.Jobs) != 1 || second.Jobs[0].ID != want[0] {
		t.Errorf("second claim = %v, want the due job beyond the ring %v", jobIDs(second.Jobs), want)
	}
}

func TestClaimSettlesJobsOfDeletedAndDisabledSubscriptions(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	due := time.Now().Add(-time.Second)
	deleted := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	disabled := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	live := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	deletedJob := insertJobs(t, st, "acme", deleted, 1, due)[0]
	disabledJob := insertJobs(t, st, "acme", disabled, 1, due)[0]
	liveJob := insertJobs(t, st, "acme", live, 1, due)[0]
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET deleted_at = now(), signing_secret = NULL WHERE id = $1`, deleted); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET enabled = false WHERE id = $1`, disabled); err != nil {
		t.Fatal(err)
	}

	res := claim(t, st, "w", 10, "")
	if len(res.Jobs) != 1 || res.Jobs[0].ID != liveJob || res.Canceled != 1 || res.Disabled != 1 {
		t.Fatalf("claim = %v %+v, want only the live job, one canceled, one disabled", jobIDs(res.Jobs), res)
	}
	if j := readJob(t, st, deletedJob); j.State != JobCanceled {
		t.Errorf("job of the deleted subscription is %+v, want canceled", j)
	}
	if j := readJob(t, st, disabledJob); j.State != JobDead || *j.DeadReason != DeadSubscriptionDisabled || j.Attempts != 0 {
		t.Errorf("job of the disabled subscription is %+v, want dead subscription_disabled without an attempt", j)
	}
}

func TestConcurrentClaimersNeverShareAJob(t *testing.T) {
	st := ingestStore(t)
	due := time.Now().Add(-time.Second)
	total := 0
	for i := range 5 {
		tenant := fmt.Sprintf("t%d", i)
		insertJobs(t, st, tenant, addTestSubscription(t, st, tenant, "webhook", []string{"*"}), 40+i, due)
		total += 40 + i
	}
	var mu sync.Mutex
	seen := map[uuid.UUID]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		owner := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			after, empty := "", 0
			for empty < 3 {
				res, err := st.Claim(context.Background(), ClaimRequest{Owner: owner, Limit: 7, Now: time.Now(), After: after, LeaseMargin: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				after = res.Resume
				if len(res.Jobs) == 0 {
					empty++
					continue
				}
				mu.Lock()
				for _, j := range res.Jobs {
					if other, dup := seen[j.ID]; dup {
						errs <- fmt.Errorf("job %s claimed by %s and %s", j.ID, other, owner)
					}
					seen[j.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != total {
		t.Errorf("claimed %d distinct jobs, want %d", len(seen), total)
	}
}

// claimOne makes a subscription with one due job and claims it.
func claimOne(t *testing.T, st *Store, owner string) (ClaimedJob, string) {
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
		Response: []byte("answer"),
	}
}

var noAutoDisable = AutoDisablePolicy{Enabled: false, Window: time.Hour, Spread: time.Hour}

type spanRow struct {
	FailingSince, LastFailureAt *time.Time
	Enabled                     bool
	DisabledReason              *string
}

func readSpan(t *testing.T, st *Store, sub string) spanRow {
	t.Helper()
	var s spanRow
	err := st.Pool.QueryRow(context.Background(), `SELECT failing_since, last_failure_at, enabled, disabled_reason FROM subscriptions WHERE id = $1`,
		sub).Scan(&s.FailingSince, &s.LastFailureAt, &s.Enabled, &s.DisabledReason)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCompleteTransitions(t *testing.T) {
	retryAt := time.Now().Add(time.Minute).Truncate(time.Microsecond)
	cases := []struct {
		name        string
		ok          bool
		retry       Retry
		wantState   string
		wantDead    string
		wantSpan    bool
		wantAttempt string
	}{
		{name: "success", ok: true, wantState: JobSucceeded, wantAttempt: "succeeded"},
		{name: "failure retried", retry: Retry{At: retryAt}, wantState: JobPending, wantSpan: true, wantAttempt: "failed"},
		{name: "failure exhausted", retry: Retry{Exhausted: true}, wantState: JobDead, wantDead: DeadExhausted, wantSpan: true, wantAttempt: "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := ingestStore(t)
			job, sub := claimOne(t, st, "w")
			a := attemptOf(job, "w", tc.ok, 500)
			if tc.ok {
				a.StatusCode = 204
			} else {
				a.Error = "HTTP 500 Internal Server Error"
			}
			a.Retry = tc.retry
			res, err := st.Complete(context.Background(), a, noAutoDisable)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if !res.Owned || res.Number != 1 || res.AutoDisabled || res.Dead != (tc.wantDead != "") {
				t.Errorf("result = %+v", res)
			}
			j := readJob(t, st, job.ID)
			if j.State != tc.wantState || j.Attempts != 1 || j.LeaseOwner != nil || (tc.wantDead != "" && *j.DeadReason != tc.wantDead) {
				t.Errorf("job = %+v, want %s", j, tc.wantState)
			}
			if tc.wantState == JobPending && !j.NextAt.Equal(retryAt) {
				t.Errorf("next attempt at %v, want %v", j.NextAt, retryAt)
			}
			if !tc.ok && (j.LastError == nil || *j.LastError != a.Error || *j.LastStatus != 500) {
				t.Errorf("last error/status = %v/%v", j.LastError, j.LastStatus)
			}
			if span := readSpan(t, st, sub); (span.FailingSince != nil) != tc.wantSpan {
				t.Errorf("span = %+v, want open: %v", span, tc.wantSpan)
			}
			var id uuid.UUID
			var outcome string
			var status, duration int
			var snippet []byte
			err = st.Pool.QueryRow(context.Background(), `SELECT id, outcome, status_code, duration_ms, response_snippet FROM delivery_attempts WHERE job_id = $1 AND attempt = 1`,
				job.ID).Scan(&id, &outcome, &status, &duration, &snippet)
			if err != nil || id != a.DeliveryID || outcome != tc.wantAttempt || status != a.StatusCode || duration != 12 || string(snippet) != "answer" {
				t.Errorf("attempt row = %v %s %d %d %q (%v)", id, outcome, status, duration, snippet, err)
			}
		})
	}
}

func TestCompleteSuccessClearsTheFailureSpan(t *testing.T) {
	st := ingestStore(t)
	job, sub := claimOne(t, st, "w")
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET failing_since = now() - interval '1 day', last_failure_at = now() WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Complete(context.Background(), attemptOf(job, "w", true, 200), noAutoDisable); err != nil {
		t.Fatal(err)
	}
	if span := readSpan(t, st, sub); span.FailingSince != nil || span.LastFailureAt != nil {
		t.Errorf("span = %+v, want cleared", span)
	}
}

func TestCompleteAfterTheLeaseWasRecoveredOnlyRecordsTheAttempt(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	job, _ := claimOne(t, st, "old")
	// The lease lapses, the job is recovered and claimed by another owner.
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if rec, err := st.RecoverExpiredLeases(ctx, time.Now(), 5); err != nil || rec.Retried != 1 {
		t.Fatalf("recover = %+v, %v", rec, err)
	}
	if res := claim(t, st, "new", 1, ""); len(res.Jobs) != 1 {
		t.Fatal("the recovered job was not claimable")
	}
	late := attemptOf(job, "old", true, 200)
	res, err := st.Complete(ctx, late, noAutoDisable)
	if err != nil {
		t.Fatal(err)
	}
	if res.Owned || res.Number != 1 {
		t.Errorf("late result = %+v, want not owned, attempt 1", res)
	}
	if j := readJob(t, st, job.ID); j.State != JobInFlight || *j.LeaseOwner != "new" || j.Recoveries != 1 {
		t.Errorf("job = %+v, want still in flight under the new owner", j)
	}
	res, err = st.Complete(ctx, attemptOf(job, "new", false, 503), noAutoDisable)
	if err != nil || !res.Owned || res.Number != 2 {
		t.Errorf("new owner's result = %+v, %v; want owned, attempt 2", res, err)
	}
}

func TestCompleteAutoDisables(t *testing.T) {
	cases := []struct {
		name         string
		policy       AutoDisablePolicy
		failingSince time.Duration // ago
		wantDisabled bool
	}{
		{name: "both gates hold", policy: AutoDisablePolicy{Enabled: true, Window: time.Hour, Spread: time.Hour}, failingSince: 2 * time.Hour, wantDisabled: true},
		{name: "window not reached", policy: AutoDisablePolicy{Enabled: true, Window: 3 * time.Hour, Spread: time.Hour}, failingSince: 2 * time.Hour},
		{name: "kill switch", policy: AutoDisablePolicy{Enabled: false, Window: time.Hour, Spread: time.Hour}, failingSince: 2 * time.Hour},
		{name: "new span", policy: AutoDisablePolicy{Enabled: true, Window: time.Hour, Spread: time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := ingestStore(t)
			ctx := context.Background()
			job, sub := claimOne(t, st, "w")
			queued := insertJobs(t, st, "acme", sub, 3, time.Now().Add(time.Hour))
			if tc.failingSince > 0 {
				if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET failing_since = $2, last_failure_at = $2 WHERE id = $1`,
					sub, time.Now().Add(-tc.failingSince)); err != nil {
					t.Fatal(err)
				}
			}
			a := attemptOf(job, "w", false, 500)
			a.Retry = Retry{At: time.Now().Add(time.Minute)}
			res, err := st.Complete(ctx, a, tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			span := readSpan(t, st, sub)
			if res.AutoDisabled != tc.wantDisabled || span.Enabled == tc.wantDisabled {
				t.Fatalf("auto-disabled = %v, enabled = %v; want disabled %v", res.AutoDisabled, span.Enabled, tc.wantDisabled)
			}
			if span.FailingSince == nil || span.LastFailureAt == nil {
				t.Errorf("span = %+v, want open", span)
			}
			wantQueued := JobPending
			if tc.wantDisabled {
				wantQueued = JobDead
				if res.ShedJobs != 4 || *span.DisabledReason != "auto_disabled" {
					t.Errorf("shed %d jobs, reason %v; want 4 (3 queued + the retried one), auto_disabled", res.ShedJobs, span.DisabledReason)
				}
			}
			for _, id := range append(queued, job.ID) {
				if j := readJob(t, st, id); j.State != wantQueued || (tc.wantDisabled && *j.DeadReason != DeadSubscriptionDisabled) {
					t.Errorf("job %s = %+v, want %s", id, j, wantQueued)
				}
			}
		})
	}
}

func TestShedKeepsTheAttemptBudget(t *testing.T) {
	st := ingestStore(t)
	job, _ := claimOne(t, st, "w")
	retryAt := time.Now().Add(30 * time.Second).Truncate(time.Microsecond)
	if ok, err := st.Shed(context.Background(), job.ID, "someone-else", retryAt); err != nil || ok {
		t.Errorf("shed by another owner = %v, %v; want refused", ok, err)
	}
	if ok, err := st.Shed(context.Background(), job.ID, "w", retryAt); err != nil || !ok {
		t.Fatalf("Shed = %v, %v", ok, err)
	}
	j := readJob(t, st, job.ID)
	if j.State != JobPending || j.Attempts != 0 || !j.NextAt.Equal(retryAt) || j.LeaseOwner != nil {
		t.Errorf("job = %+v, want pending at %v with no attempt spent", j, retryAt)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_attempts`); n != 0 {
		t.Errorf("%d attempts recorded, want none", n)
	}
}

func TestRecoverExpiredLeasesPoisonsAtTheThreshold(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	job, _ := claimOne(t, st, "w")
	const threshold = 3
	// Recovered threshold times, then dead on the next expiry.
	for i := 1; i <= threshold+1; i++ {
		if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, job.ID); err != nil {
			t.Fatal(err)
		}
		rec, err := st.RecoverExpiredLeases(ctx, time.Now(), threshold)
		if err != nil {
			t.Fatal(err)
		}
		j := readJob(t, st, job.ID)
		if i <= threshold {
			if rec != (Recovered{Retried: 1}) || j.State != JobPending || j.Recoveries != i {
				t.Fatalf("recovery %d: %+v, job %+v; want pending with %d recoveries", i, rec, j, i)
			}
			if res := claim(t, st, "w", 1, ""); len(res.Jobs) != 1 {
				t.Fatalf("recovery %d: job not claimable again", i)
			}
			continue
		}
		if rec != (Recovered{Poisoned: 1}) || j.State != JobDead || *j.DeadReason != DeadPoison || j.Recoveries != threshold {
			t.Errorf("last recovery: %+v, job %+v; want dead poison", rec, j)
		}
	}
	// A live lease is left alone.
	live, _ := claimOne(t, st, "w")
	if rec, err := st.RecoverExpiredLeases(ctx, time.Now(), threshold); err != nil || rec != (Recovered{}) {
		t.Errorf("recover with only a live lease = %+v, %v", rec, err)
	}
	if j := readJob(t, st, live.ID); j.State != JobInFlight {
		t.Errorf("live job = %+v", j)
	}
}

func TestDueBacklog(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	insertJobs(t, st, "acme", sub, 4, time.Now().Add(-time.Second))
	insertJobs(t, st, "acme", sub, 2, time.Now().Add(time.Hour))
	if n, err := st.DueBacklog(context.Background(), time.Now()); err != nil || n != 4 {
		t.Errorf("DueBacklog = %d, %v; want 4", n, err)
	}
}

func TestListenJobsWakesOnIngest(t *testing.T) {
	st := ingestStore(t)
	addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := st.ListenJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close(context.Background()) }()
	writeBatch(t, st, batchOf(0, 1, accepted(t, 0, "acme", testEventID(1), []byte(`{}`))))
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if err := l.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with nothing new = %v, want the context's deadline", err)
	}
}

func TestClaimRejectsBadRequests(t *testing.T) {
	st := ingestStore(t)
	for _, req := range []ClaimRequest{{Owner: "", Limit: 1}, {Owner: "w", Limit: 0}} {
		if _, err := st.Claim(context.Background(), req); err == nil {
			t.Errorf("Claim(%+v) succeeded", req)
		}
	}
}

func TestCompleteSuccessesRecordsABatchInOneGo(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	insertJobs(t, st, "acme", sub, 3, time.Now().Add(-time.Second))
	jobs := claim(t, st, "w", 3, "").Jobs
	if len(jobs) != 3 {
		t.Fatalf("claimed %d jobs, want 3", len(jobs))
	}
	// The third job's lease was lost to another owner: its attempt is
	// recorded but moves nothing. The first job has a late attempt of a
	// former owner beside this one, in the same batch.
	if _, err := st.Pool.Exec(ctx, `UPDATE delivery_jobs SET lease_owner = 'other' WHERE id = $1`, jobs[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool.Exec(ctx, `UPDATE subscriptions SET failing_since = now() - interval '1 hour', last_failure_at = now() - interval '1 minute' WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	late := attemptOf(jobs[0], "former", true, 200)
	batch := []Attempt{late, attemptOf(jobs[0], "w", true, 204), attemptOf(jobs[1], "w", true, 0), attemptOf(jobs[2], "w", true, 200)}
	batch[2].Response = nil
	res, err := st.CompleteSuccesses(ctx, batch)
	if err != nil {
		t.Fatalf("CompleteSuccesses: %v", err)
	}
	want := []CompleteResult{{Number: 1}, {Number: 2, Owned: true}, {Number: 1, Owned: true}, {Number: 1}}
	if !slices.Equal(res, want) {
		t.Errorf("results = %+v, want %+v", res, want)
	}
	for i, wantState := range []string{JobSucceeded, JobSucceeded, JobInFlight} {
		if j := readJob(t, st, jobs[i].ID); j.State != wantState {
			t.Errorf("job %d = %+v, want %s", i, j, wantState)
		}
	}
	if j := readJob(t, st, jobs[1].ID); j.LastStatus != nil || j.Attempts != 1 {
		t.Errorf("job without a status code = %+v, want no last status, one attempt", j)
	}
	if n := queryCount(t, st, `SELECT count(*) FROM delivery_attempts WHERE response_snippet IS NULL AND status_code IS NULL`); n != 1 {
		t.Errorf("%d attempts without status and response, want 1", n)
	}
	if span := readSpan(t, st, sub); span.FailingSince != nil {
		t.Errorf("span = %+v, want closed by the successes", span)
	}
}

func TestCompleteSuccessesLeavesASpanWhoseLastFailureCameLater(t *testing.T) {
	st := ingestStore(t)
	job, sub := claimOne(t, st, "w")
	a := attemptOf(job, "w", true, 200)
	a.StartedAt = time.Now().Add(-time.Minute) // finished before the failure below
	if _, err := st.Pool.Exec(context.Background(), `UPDATE subscriptions SET failing_since = now() - interval '1 hour', last_failure_at = now() WHERE id = $1`, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CompleteSuccesses(context.Background(), []Attempt{a}); err != nil {
		t.Fatal(err)
	}
	if span := readSpan(t, st, sub); span.FailingSince == nil {
		t.Error("a success older than the last failure closed the span")
	}
	if j := readJob(t, st, job.ID); j.State != JobSucceeded {
		t.Errorf("job = %+v, want succeeded", j)
	}
}

func TestCompleteSuccessesRejectsFailures(t *testing.T) {
	st := ingestStore(t)
	job, _ := claimOne(t, st, "w")
	if _, err := st.CompleteSuccesses(context.Background(), []Attempt{attemptOf(job, "w", false, 500)}); err == nil {
		t.Error("a failed attempt was recorded as a success")
	}
	if res, err := st.CompleteSuccesses(context.Background(), nil); err != nil || res != nil {
		t.Errorf("empty batch = %v, %v", res, err)
	}
}

func TestReleaseHandsJobsBackWithoutSpendingAnything(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	due := time.Now().Add(-time.Second).Truncate(time.Microsecond)
	insertJobs(t, st, "acme", sub, 2, due)
	jobs := claim(t, st, "w", 2, "").Jobs
	if n, err := st.Release(ctx, "someone-else", jobIDs(jobs)); err != nil || n != 0 {
		t.Errorf("release by another owner = %d, %v; want nothing released", n, err)
	}
	if n, err := st.Release(ctx, "w", jobIDs(jobs)); err != nil || n != 2 {
		t.Fatalf("Release = %d, %v; want 2", n, err)
	}
	for _, job := range jobs {
		if j := readJob(t, st, job.ID); j.State != JobPending || j.Attempts != 0 || j.Recoveries != 0 || j.LeaseOwner != nil || !j.NextAt.Equal(due) {
			t.Errorf("job = %+v, want pending as it was", j)
		}
	}
	if n, err := st.Release(ctx, "w", nil); err != nil || n != 0 {
		t.Errorf("Release of nothing = %d, %v", n, err)
	}
}

func TestRoundsOfDistinctJobs(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	cases := []struct {
		name string
		jobs []uuid.UUID
		want [][]int
	}{
		{name: "distinct jobs share one round", jobs: []uuid.UUID{a, b, c}, want: [][]int{{0, 1, 2}}},
		{name: "a repeated job goes to the next round", jobs: []uuid.UUID{a, b, a, a}, want: [][]int{{0, 1}, {2}, {3}}},
		{name: "nothing", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attempts := make([]Attempt, len(tc.jobs))
			for i, id := range tc.jobs {
				attempts[i].JobID = id
			}
			got := roundsOfDistinctJobs(attempts)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]int]) {
				t.Errorf("rounds = %v, want %v", got, tc.want)
			}
		})
	}
}

// SPEC §1.5: first attempts start in seq order. Ingest inserts jobs under
// its lock, but a transaction may have started before one that took the
// lock (and so lower seqs) first; a job is due from the moment of its
// insert, not from its transaction's start, so the later seq is never due
// earlier.
func TestNewJobsAreDueFromTheirInsertNotTheirTransactionStart(t *testing.T) {
	st := ingestStore(t)
	sub := addTestSubscription(t, st, "acme", "webhook", []string{"*"})
	ctx := context.Background()

	early, err := st.Pool.Begin(ctx) // starts first, writes last
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = early.Rollback(ctx) }()
	var earlyStart time.Time
	if err := early.QueryRow(ctx, `SELECT now()`).Scan(&earlyStart); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the other batch's whole transaction
	first := insertJobsDueByDefault(ctx, t, st.Pool, "acme", sub)
	second := insertJobsDueByDefault(ctx, t, early, "acme", sub)
	if err := early.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !second.After(first) || !second.After(earlyStart) {
		t.Errorf("the later insert is due at %v, the earlier at %v (its transaction started %v); want it due later",
			second, first, earlyStart)
	}
}

// insertJobsDueByDefault inserts one event and its job as ingest does,
// leaving next_attempt_at to its default, and returns it.
func insertJobsDueByDefault(ctx context.Context, t *testing.T, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, tenant, sub string) time.Time {
	t.Helper()
	var due time.Time
	err := db.QueryRow(ctx, `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    VALUES ($1, gen_random_uuid(), 'transaction.posted', '1.2.0', 1, 'midaz', 'studio.lerian.transaction.posted',
            now(), '{}', '{}', '{}', 'topic', 0, 0)
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq)
SELECT gen_random_uuid(), $1, $2, seq FROM ev
RETURNING next_attempt_at`, tenant, sub).Scan(&due)
	if err != nil {
		t.Fatalf("insert job: %v", err)
	}
	return due
}
