package queue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

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
	if row := readJob(t, st, j.ID); row.State != pg.JobInFlight || row.LeaseOwner == nil || *row.LeaseOwner != "worker-1" {
		t.Errorf("job row = %+v, want in_flight leased to worker-1", row)
	}

	if res := claim(t, st, "worker-1", 5, ""); len(res.Jobs) != 1 || res.Jobs[0].ID != ids[2] {
		t.Errorf("second claim = %v, want only %v", jobIDs(res.Jobs), ids[2])
	}
	if res := claim(t, st, "worker-1", 5, ""); len(res.Jobs) != 0 || res.Resume != "acme" {
		t.Errorf("third claim = %v resume %q, want nothing, resume acme", jobIDs(res.Jobs), res.Resume)
	}
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

// TestClaimPassesSkippedTenantsOver: a skipped tenant is treated as if it
// had no due job, so the batch is shared among the others alone and its
// jobs stay pending, untouched; no skip list claims from every tenant.
func TestClaimPassesSkippedTenantsOver(t *testing.T) {
	st := ingestStore(t)
	due := time.Now().Add(-time.Second)
	stalled := insertJobs(t, st, "a-stalled", addTestSubscription(t, st, "a-stalled", "webhook", []string{"*"}), 3, due)
	insertJobs(t, st, "b-other", addTestSubscription(t, st, "b-other", "webhook", []string{"*"}), 4, due)

	res, err := st.Claim(context.Background(), ClaimRequest{Owner: "w", Limit: 4, Now: time.Now(), LeaseMargin: testLeaseMargin,
		SkipTenants: []string{"a-stalled"}})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if got := tenantsOf(res.Jobs); !slices.Equal(got, []string{"b-other", "b-other", "b-other", "b-other"}) {
		t.Errorf("claim skipping a-stalled went to %v, want the whole batch to b-other", got)
	}
	for _, id := range stalled {
		if j := readJob(t, st, id); j.State != "pending" || j.LeaseOwner != nil {
			t.Errorf("skipped tenant's job %v is %s (leased: %v), want pending and untouched", id, j.State, j.LeaseOwner != nil)
		}
	}
	if got := tenantsOf(claim(t, st, "w", 4, "").Jobs); !slices.Equal(got, []string{"a-stalled", "a-stalled", "a-stalled"}) {
		t.Errorf("claim without a skip list went to %v, want the skipped tenant's jobs", got)
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
	if j := readJob(t, st, deletedJob); j.State != pg.JobCanceled {
		t.Errorf("job of the deleted subscription is %+v, want canceled", j)
	}
	if j := readJob(t, st, disabledJob); j.State != pg.JobDead || *j.DeadReason != pg.DeadSubscriptionDisabled || j.Attempts != 0 {
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

func TestClaimRejectsBadRequests(t *testing.T) {
	st := ingestStore(t)
	for _, req := range []ClaimRequest{{Owner: "", Limit: 1}, {Owner: "w", Limit: 0}} {
		if _, err := st.Claim(context.Background(), req); err == nil {
			t.Errorf("Claim(%+v) succeeded", req)
		}
	}
}

// Ordering (docs/concepts.md): first attempts start in seq order. Ingest inserts jobs under
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
