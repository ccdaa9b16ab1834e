package store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/autodisable"
)

// Delivery job states and dead-letter reasons (migration 1, SPEC §3.3).
const (
	JobPending   = "pending"
	JobInFlight  = "in_flight"
	JobSucceeded = "succeeded"
	JobDead      = "dead"
	JobCanceled  = "canceled"

	DeadExhausted            = "exhausted"
	DeadPoison               = "poison"
	DeadSubscriptionDisabled = "subscription_disabled"
)

// ClaimRingSize bounds how many tenants with pending jobs one claim visits
// looking for due work. Each visit costs one index probe; the claim resumes
// where the last one stopped, so tenants beyond the ring are reached by the
// next claims.
const ClaimRingSize = 1024

// maxAttemptErrorBytes bounds the error text kept per attempt and job.
const maxAttemptErrorBytes = 1000

// ClaimRequest asks for up to Limit due jobs.
type ClaimRequest struct {
	Owner string // lease_owner of the claimed jobs: this process
	Limit int
	Now   time.Time
	// After is the tenant the previous claim stopped at (ClaimResult.Resume);
	// the claim starts with the tenant after it, wrapping around. "" starts
	// at the first tenant.
	After string
	// LeaseMargin is added to each subscription's attempt_timeout to form
	// the lease: time for the attempt to be recorded after it ends.
	LeaseMargin time.Duration
}

// ClaimResult is what one claim took.
type ClaimResult struct {
	// Jobs are now in_flight, leased to the owner, oldest first.
	Jobs []ClaimedJob
	// Resume is where the next claim should start (its ClaimRequest.After).
	Resume string
	// Jobs the claim settled without an attempt: of deleted subscriptions
	// (canceled), of disabled ones (dead, subscription_disabled) and jobs
	// whose event is missing from the inbox (dead, poison).
	Canceled, Disabled, Orphaned int
}

// ClaimedJob is one claimed job with its event. Its subscription is named,
// not returned: claims are frequent and subscriptions rarely change, so
// dispatch keeps the rows it has read (SubscriptionsByID) and reads one
// again only when the claim saw a newer version.
type ClaimedJob struct {
	ID         uuid.UUID
	Attempts   int // attempts made before this claim
	Recoveries int
	LeaseUntil time.Time
	TenantID   string
	// SubscriptionID and SubscriptionUpdatedAt name the version of the
	// subscription the claim found enabled.
	SubscriptionID        uuid.UUID
	SubscriptionUpdatedAt time.Time
	Event                 ClaimedEvent
}

// ClaimedEvent is the stored event of a claimed job.
type ClaimedEvent struct {
	Seq             int64
	ID              string
	Key             string
	SchemaVersion   string
	Source          string
	Type            string
	Time            time.Time
	Subject         string
	DataContentType string
	DataSchema      string
	TraceParent     string
	TraceState      string
	Payload         []byte
	ReceivedAt      time.Time
}

// Claim atomically moves up to req.Limit due pending jobs to in_flight,
// leased to req.Owner until now + the subscription's attempt_timeout +
// req.LeaseMargin, and returns them with their subscription and event: one
// statement, one round trip.
//
// Tenants are interleaved so that one tenant's backlog never starves
// another (SPEC §3.1). The claim walks the tenants that have pending jobs
// (a loose index scan of delivery_jobs_due, cheap per tenant however deep
// its backlog) in a ring starting after req.After, keeps the first Limit
// that have due jobs, and gives each an equal share of the batch, its
// oldest due jobs first. Rows are locked FOR UPDATE SKIP LOCKED, so
// concurrent claimers in any number of processes never take the same job.
//
// A job whose subscription was deleted is canceled and one whose
// subscription is disabled becomes dead (subscription_disabled, replayable)
// here, without an attempt.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	if req.Limit < 1 || req.Owner == "" {
		return ClaimResult{}, fmt.Errorf("claim jobs: need an owner and a limit of at least 1 (got %q, %d)", req.Owner, req.Limit)
	}
	rows, err := s.Pool.Query(ctx, claimJobs, req.After, ClaimRingSize, req.Now, req.Limit, req.Owner,
		max(req.LeaseMargin, 0).Milliseconds())
	if err != nil {
		return ClaimResult{}, classify(fmt.Errorf("claim jobs: %w", err))
	}
	defer rows.Close()
	var res ClaimResult
	for rows.Next() {
		if string(rows.RawValues()[0]) == "summary" {
			var resume *string
			dest := make([]any, len(rows.RawValues()))
			dest[1], dest[2], dest[3], dest[4] = &resume, &res.Canceled, &res.Disabled, &res.Orphaned
			if err := rows.Scan(dest...); err != nil {
				return ClaimResult{}, classify(fmt.Errorf("claim jobs: %w", err))
			}
			res.Resume = deref(resume)
			continue
		}
		job, err := scanClaimedJob(rows)
		if err != nil {
			return ClaimResult{}, classify(fmt.Errorf("claim jobs: %w", err))
		}
		res.Jobs = append(res.Jobs, job)
	}
	if err := rows.Err(); err != nil {
		return ClaimResult{}, classify(fmt.Errorf("claim jobs: %w", err))
	}
	slices.SortFunc(res.Jobs, func(a, b ClaimedJob) int { return cmp.Compare(a.Event.Seq, b.Event.Seq) })
	return res, nil
}

// claimedColumns are the columns of every job row of claimJobs.
const claimedColumns = `c.id, c.attempts, c.recoveries, c.lease_until, c.tenant_id, c.subscription_id, c.subscription_updated_at,
	e.seq, e.id::text, e.event_key, e.schema_version, e.source, e.type, e.time, e.subject, e.datacontenttype,
	e.dataschema, e.traceparent, e.tracestate, e.payload, e.received_at`

// claimSummaryColumns are the columns before claimedColumns: the row kind and
// the summary's fields, null on job rows.
const claimSummaryColumns = 5

func scanClaimedJob(rows pgx.Rows) (ClaimedJob, error) {
	var (
		j                                                         ClaimedJob
		subject, contentType, dataSchema, traceParent, traceState *string
	)
	e := &j.Event
	dest := make([]any, claimSummaryColumns, claimSummaryColumns+21)
	dest = append(dest, &j.ID, &j.Attempts, &j.Recoveries, &j.LeaseUntil, &j.TenantID, &j.SubscriptionID, &j.SubscriptionUpdatedAt,
		&e.Seq, &e.ID, &e.Key, &e.SchemaVersion, &e.Source, &e.Type, &e.Time, &subject, &contentType,
		&dataSchema, &traceParent, &traceState, &e.Payload, &e.ReceivedAt)
	if err := rows.Scan(dest...); err != nil {
		return ClaimedJob{}, err
	}
	e.Subject, e.DataContentType, e.DataSchema = deref(subject), deref(contentType), deref(dataSchema)
	e.TraceParent, e.TraceState = deref(traceParent), deref(traceState)
	return j, nil
}

// claimJobs is Claim's statement. $1 after, $2 ring size, $3 now, $4 limit,
// $5 owner, $6 lease margin in milliseconds.
//
//   - ring: the loose index scan. Each step is the first entry of
//     delivery_jobs_due above the previous tenant, wrapping to the first
//     overall, until the ring closes or holds $2 tenants. The index is
//     ordered by (tenant_id, next_attempt_at), so that one probe yields the
//     next tenant and its earliest next_attempt_at together. The wrap-around
//     branch of each UNION ALL ... LIMIT 1 runs only when the first finds
//     nothing. Steps run only as far as later parts read. (The tenant and
//     its earliest job used to be two min() probes, and the first step's
//     coalesce was inlined into each of its three uses: six walks of the
//     index head per claim of one tenant, now three.)
//   - due: ring tenants with at least one due job, in ring order, at most
//     $4 of them; reading stops as soon as there are enough. (A separate
//     per-tenant due check is a trap: as EXISTS the planner may hash every
//     pending job; as LATERAL ... LIMIT 1 it chose a sequential scan that
//     walks past every claimed and finished row at the head of the table,
//     which grew each claim to tens of milliseconds under a backlog.)
//   - picked: each due tenant's oldest due jobs, an equal share of the
//     batch, locked SKIP LOCKED: jobs another claimer holds are passed over.
//   - chosen: round-robin over the tenants (each one's first job, then each
//     one's second, ...) up to $4 jobs.
//   - settled, claimed: each job's fate by its subscription: leased, or
//     canceled (deleted subscription), or dead (disabled subscription;
//     missing event). settled is materialised so its verdict is computed
//     once per job, not once per column that reads it.
//
// The result is one row per leased job and one summary row: where the next
// claim resumes (after the last tenant served, or after the ring when none
// was, so tenants beyond the ring are reached) and what was settled without
// an attempt.
var claimJobs = `
WITH RECURSIVE ring (tenant_id, earliest, first_tenant, n) AS (
    SELECT start.tenant_id, start.earliest, start.tenant_id, 1
    FROM (
        (SELECT tenant_id, next_attempt_at AS earliest FROM delivery_jobs
         WHERE state = 'pending' AND tenant_id > $1 ORDER BY tenant_id, next_attempt_at LIMIT 1)
        UNION ALL
        (SELECT tenant_id, next_attempt_at FROM delivery_jobs
         WHERE state = 'pending' ORDER BY tenant_id, next_attempt_at LIMIT 1)
        LIMIT 1) start
  UNION ALL
    SELECT step.tenant_id, step.earliest, r.first_tenant, r.n + 1
    FROM ring r
    CROSS JOIN LATERAL (
        (SELECT tenant_id, next_attempt_at AS earliest FROM delivery_jobs
         WHERE state = 'pending' AND tenant_id > r.tenant_id ORDER BY tenant_id, next_attempt_at LIMIT 1)
        UNION ALL
        (SELECT tenant_id, next_attempt_at FROM delivery_jobs
         WHERE state = 'pending' ORDER BY tenant_id, next_attempt_at LIMIT 1)
        LIMIT 1) step
    WHERE r.n < $2 AND step.tenant_id <> r.first_tenant
),
due AS (
    SELECT tenant_id, n FROM ring WHERE earliest <= $3 LIMIT $4
),
share AS (
    SELECT ceil($4::float8 / greatest(count(*), 1))::int AS per_tenant FROM due
),
picked AS (
    SELECT j.id, j.subscription_id, j.event_seq, j.next_attempt_at, d.tenant_id, d.n
    FROM due d
    CROSS JOIN LATERAL (
        SELECT id, subscription_id, event_seq, next_attempt_at FROM delivery_jobs j
        WHERE j.state = 'pending' AND j.tenant_id = d.tenant_id AND j.next_attempt_at <= $3
        ORDER BY j.next_attempt_at, j.event_seq
        LIMIT (SELECT per_tenant FROM share)
        FOR UPDATE SKIP LOCKED) j
),
chosen AS (
    SELECT id, subscription_id, event_seq, n FROM (
        SELECT p.*, row_number() OVER (PARTITION BY p.tenant_id ORDER BY p.next_attempt_at, p.event_seq) AS rank
        FROM picked p) ranked
    ORDER BY rank, n
    LIMIT $4
),
settled AS MATERIALIZED (
    SELECT c.id, c.n, s.attempt_timeout_ms, s.updated_at,
        CASE WHEN s.deleted_at IS NOT NULL THEN 'canceled'
             WHEN NOT s.enabled THEN 'subscription_disabled'
             WHEN NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = c.event_seq) THEN 'missing_event'
             ELSE 'claimed' END AS verdict
    FROM chosen c JOIN subscriptions s ON s.id = c.subscription_id
),
claimed AS (
    UPDATE delivery_jobs j SET
        state = CASE x.verdict WHEN 'claimed' THEN 'in_flight' WHEN 'canceled' THEN 'canceled' ELSE 'dead' END,
        dead_reason = CASE x.verdict WHEN 'subscription_disabled' THEN 'subscription_disabled'
                                     WHEN 'missing_event' THEN 'poison' END,
        dead_at = CASE WHEN x.verdict IN ('subscription_disabled', 'missing_event') THEN $3::timestamptz END,
        lease_owner = CASE WHEN x.verdict = 'claimed' THEN $5 END,
        lease_until = CASE WHEN x.verdict = 'claimed'
                           THEN $3::timestamptz + (x.attempt_timeout_ms + $6::bigint) * interval '1 millisecond' END,
        last_error = CASE WHEN x.verdict = 'missing_event' THEN 'the event of this job is missing from the inbox'
                          ELSE j.last_error END,
        updated_at = $3
    FROM settled x
    WHERE j.id = x.id AND j.state = 'pending'
    RETURNING j.id, j.tenant_id, j.subscription_id, x.updated_at AS subscription_updated_at, j.event_seq, j.attempts,
        j.recoveries, j.lease_until, x.verdict, x.n
)
SELECT 'job', NULL, NULL, NULL, NULL, ` + claimedColumns + `
FROM claimed c
JOIN events e ON e.seq = c.event_seq
WHERE c.verdict = 'claimed'
UNION ALL
SELECT 'summary',
    coalesce((SELECT tenant_id FROM claimed ORDER BY n DESC LIMIT 1),
             (SELECT tenant_id FROM ring ORDER BY n DESC LIMIT 1)),
    (SELECT count(*) FROM claimed WHERE verdict = 'canceled')::int,
    (SELECT count(*) FROM claimed WHERE verdict = 'subscription_disabled')::int,
    (SELECT count(*) FROM claimed WHERE verdict = 'missing_event')::int,
    ` + nulls(strings.Count(claimedColumns, ",")+1)

func nulls(n int) string {
	return strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ")
}

// Attempt is the outcome of one attempt, as Complete records it.
type Attempt struct {
	JobID          uuid.UUID
	SubscriptionID uuid.UUID
	Owner          string    // the claim's owner
	DeliveryID     uuid.UUID // X-Lerian-Delivery-Id; the attempt row's id
	StartedAt      time.Time
	Duration       time.Duration
	OK             bool
	StatusCode     int // 0 when the protocol has none
	Error          string
	Response       []byte // at most 1 KiB is kept
	// Retry says what a failure leads to: due again at Retry.At, or dead
	// (exhausted). Ignored on success.
	Retry Retry
}

// Retry is the schedule's verdict after a failed attempt.
type Retry struct {
	At        time.Time
	Exhausted bool
}

// AutoDisablePolicy is SPEC §3.6's configuration.
type AutoDisablePolicy struct {
	Enabled bool // STREAMING_HUB_AUTODISABLE_ENABLED, the kill switch
	Window  time.Duration
	Spread  time.Duration
}

// CompleteResult says what Complete did.
type CompleteResult struct {
	// Number is the attempt's number among the job's recorded attempts.
	Number int
	// Owned reports whether the job was still this owner's lease and so
	// moved on; a lease that expired and was recovered belongs to someone
	// else, and only the attempt row was written.
	Owned bool
	// Dead reports that the job was dead-lettered as exhausted.
	Dead bool
	// AutoDisabled reports that this failure switched the subscription
	// off; ShedJobs of its queued jobs went dead with it.
	AutoDisabled bool
	ShedJobs     int64
}

// Complete records one attempt in ONE transaction: the delivery_attempts
// row, the job's transition (only while the job is still in flight under
// a.Owner's lease) and the subscription's failure span. A success is
// recorded as CompleteSuccesses records it: the job succeeds and the span
// closes. A failure goes back to pending at
// a.Retry.At or, when exhausted, dead; it opens or extends the span, and
// when policy's gates hold, the subscription is auto-disabled and its
// queued jobs dead-lettered (subscription_disabled) in the same
// transaction.
func (s *Store) Complete(ctx context.Context, a Attempt, policy AutoDisablePolicy) (CompleteResult, error) {
	if a.OK {
		res, err := s.CompleteSuccesses(ctx, []Attempt{a})
		if err != nil {
			return CompleteResult{}, err
		}
		return res[0], nil
	}
	var res CompleteResult
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		res, err = completeFailure(ctx, tx, a, policy)
		return err
	})
	if err != nil {
		return CompleteResult{}, classify(fmt.Errorf("record attempt of job %s: %w", a.JobID, err))
	}
	return res, nil
}

// CompleteSuccesses records many successful attempts in ONE transaction
// (group commit): per attempt what Complete records for a success. Its
// results are in the order of attempts. An attempt whose job is no longer
// in flight under its owner's lease is recorded but moves nothing (Owned
// false), exactly as in Complete; every attempt is numbered under its job's
// row lock, so numbers stay dense and ordered whichever process records
// them. A subscription's failure span is closed by a success that finished
// no earlier than the span's last failure: a success recorded late, after a
// failure that came later, must not hide that failure.
//
// All attempts must be successes. A job may appear more than once (a late
// result beside a fresh one): such attempts are recorded in turn, each
// numbered after the previous.
func (s *Store) CompleteSuccesses(ctx context.Context, attempts []Attempt) ([]CompleteResult, error) {
	for _, a := range attempts {
		if !a.OK {
			return nil, fmt.Errorf("record successes: the attempt of job %s failed; record it with Complete", a.JobID)
		}
	}
	if len(attempts) == 0 {
		return nil, nil
	}
	results := make([]CompleteResult, len(attempts))
	pipe := &pgx.Batch{}
	rounds := roundsOfDistinctJobs(attempts)
	for _, round := range rounds {
		queueSuccessRound(pipe, attempts, round)
	}
	err := func() (err error) {
		br := s.Pool.SendBatch(ctx, pipe)
		defer func() {
			if closeErr := br.Close(); err == nil {
				err = closeErr
			}
		}()
		for _, round := range rounds {
			if err := readSuccessRound(br, attempts, round, results); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return nil, classify(fmt.Errorf("record %d successful attempts: %w", len(attempts), err))
	}
	return results, nil
}

// roundsOfDistinctJobs splits attempt indexes into rounds in which each
// job appears at most once: one statement numbers a job's attempt from the
// attempts committed before it, so two of one job need two statements.
func roundsOfDistinctJobs(attempts []Attempt) [][]int {
	var rounds [][]int
	seen := make(map[uuid.UUID]int, len(attempts)) // job -> attempts placed so far
	for i, a := range attempts {
		r := seen[a.JobID]
		seen[a.JobID] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], i)
	}
	return rounds
}

// recordSuccesses is one round of successes in one statement. Each job is
// updated once, by one of two CTEs whose conditions exclude each other:
// owned moves a job still leased to the attempt's owner to succeeded; late
// only numbers an attempt whose lease was recovered meanwhile (an update
// that touches no indexed column, so it stays on its page). Either way the
// job's update takes its row lock and numbers the attempt from
// recorded_attempts, so numbers stay dense and ordered whichever process
// records them, without a separate lock or a max() over the job's attempts.
// The attempts are then inserted with their numbers. late looks only at
// the attempts owned did not take, none in the common case, so the jobs
// are not looked up a second time. j.id = ANY($2) lets the planner find
// the jobs by key; joined only with the unnested rows, it hashed every
// in-flight job instead.
const recordSuccesses = `
WITH u AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::bigint[],
                         $7::int[], $8::text[], $9::bytea[])
        AS u (id, job_id, owner, started_at, finished, duration_ms, status_code, error, response)
),
owned AS (
    UPDATE delivery_jobs j SET state = 'succeeded', succeeded_at = u.finished, attempts = j.attempts + 1,
        recorded_attempts = j.recorded_attempts + 1, lease_owner = NULL, lease_until = NULL,
        last_error = NULL, last_status = u.status_code, updated_at = u.finished
    FROM u
    WHERE j.id = ANY($2) AND j.id = u.job_id AND j.state = 'in_flight' AND j.lease_owner = u.owner
    RETURNING j.id, j.recorded_attempts
),
late AS (
    UPDATE delivery_jobs j SET recorded_attempts = j.recorded_attempts + 1
    FROM (SELECT * FROM u WHERE u.job_id NOT IN (SELECT id FROM owned)) u
    WHERE j.id = u.job_id AND NOT (j.state = 'in_flight' AND j.lease_owner IS NOT DISTINCT FROM u.owner)
    RETURNING j.id, j.recorded_attempts
),
numbered AS (
    SELECT id, recorded_attempts, true AS owned FROM owned
    UNION ALL
    SELECT id, recorded_attempts, false FROM late
),
inserted AS (
    INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
    SELECT u.id, u.job_id, n.recorded_attempts, u.started_at, u.duration_ms, 'succeeded', u.status_code, u.error, u.response
    FROM u JOIN numbered n ON n.id = u.job_id
    RETURNING id, job_id, attempt
)
SELECT i.id, i.attempt, n.owned FROM inserted i JOIN numbered n ON n.id = i.job_id`

// closeSpans ends the failure spans of the subscriptions a round of
// successes reached. Any successful delivery closes the span (SPEC §3.6),
// also one whose lease had lapsed: the destination works either way. A
// success that finished before the span's last failure does not: recorded
// late, it must not hide a failure that came after it. Rows are locked in
// id order.
const closeSpans = `
UPDATE subscriptions s SET failing_since = NULL, last_failure_at = NULL
FROM (SELECT u.id, max(u.finished) AS finished FROM unnest($1::uuid[], $2::timestamptz[]) AS u (id, finished) GROUP BY u.id) u
WHERE s.id = u.id AND s.id IN (SELECT id FROM subscriptions WHERE id = ANY($1) AND failing_since IS NOT NULL ORDER BY id FOR UPDATE)
  AND s.last_failure_at <= u.finished`

// queueSuccessRound queues the two statements that record one round of
// successes: the attempts with their jobs' transitions, and the failure
// spans they close. The round is sorted by job id so that concurrent
// recorders lock jobs in one order.
func queueSuccessRound(pipe *pgx.Batch, attempts []Attempt, round []int) {
	slices.SortFunc(round, func(a, b int) int { return bytes.Compare(attempts[a].JobID[:], attempts[b].JobID[:]) })
	n := len(round)
	var (
		ids, jobs, subs     = make([][16]byte, n), make([][16]byte, n), make([][16]byte, n)
		owners, errs        = make([]string, n), make([]*string, n)
		started, finished   = make([]time.Time, n), make([]time.Time, n)
		durations, statuses = make([]int64, n), make([]*int32, n)
		responses           = make([][]byte, n)
	)
	for k, i := range round {
		a := attempts[i]
		// [16]byte, not uuid.UUID: pgx encodes a byte array directly,
		// while uuid.UUID goes through its driver.Valuer as text.
		ids[k], jobs[k], subs[k], owners[k] = a.DeliveryID, a.JobID, a.SubscriptionID, a.Owner
		started[k], finished[k] = a.StartedAt, a.StartedAt.Add(a.Duration)
		durations[k] = max(a.Duration.Milliseconds(), 0)
		statuses[k] = statusOrNull(a.StatusCode)
		errs[k] = nullIfEmpty(truncateText(a.Error, maxAttemptErrorBytes))
		responses[k] = responseSnippet(a.Response)
	}
	pipe.Queue(recordSuccesses, ids, jobs, owners, started, finished, durations, statuses, errs, responses)
	pipe.Queue(closeSpans, subs, finished)
}

// readSuccessRound reads back what queueSuccessRound queued into results.
func readSuccessRound(br pgx.BatchResults, attempts []Attempt, round []int, results []CompleteResult) error {
	byDelivery := make(map[uuid.UUID]int, len(round))
	for _, i := range round {
		byDelivery[attempts[i].DeliveryID] = i
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	var (
		id     uuid.UUID
		number int
		owned  bool
	)
	recorded := 0
	if _, err := pgx.ForEachRow(rows, []any{&id, &number, &owned}, func() error {
		results[byDelivery[id]].Number, results[byDelivery[id]].Owned = number, owned
		recorded++
		return nil
	}); err != nil {
		return err
	}
	if recorded != len(round) {
		// Jobs are never deleted, so every attempt has its job.
		return fmt.Errorf("%d of %d attempts found no job to record them on", len(round)-recorded, len(round))
	}
	_, err = br.Exec() // the spans
	return err
}

func statusOrNull(code int) *int32 {
	if code == 0 {
		return nil
	}
	c := int32(code)
	return &c
}

// responseSnippet is the first KiB of a response body, nil when empty.
func responseSnippet(body []byte) []byte {
	if len(body) == 0 {
		return nil
	}
	return body[:min(len(body), 1024)]
}

func completeFailure(ctx context.Context, tx pgx.Tx, a Attempt, policy AutoDisablePolicy) (CompleteResult, error) {
	finished := a.StartedAt.Add(a.Duration)
	var (
		res                  CompleteResult
		live                 bool
		failingSince, lastAt *time.Time
	)
	err := tx.QueryRow(ctx, `
SELECT j.state = 'in_flight' AND j.lease_owner = $2, s.enabled AND s.deleted_at IS NULL, s.failing_since, s.last_failure_at
FROM delivery_jobs j JOIN subscriptions s ON s.id = j.subscription_id
WHERE j.id = $1
FOR UPDATE OF j, s`, a.JobID, a.Owner).Scan(&res.Owned, &live, &failingSince, &lastAt)
	if err != nil {
		return CompleteResult{}, err
	}
	span := autodisable.OnFailure(autodisable.Span{FailingSince: derefTime(failingSince), LastFailureAt: derefTime(lastAt)}, finished)
	res.AutoDisabled = live && autodisable.Decide(autodisable.Input{
		Enabled: policy.Enabled, Span: span, Now: finished, Window: policy.Window, Spread: policy.Spread,
	})

	pipe := &pgx.Batch{}
	var status *int
	if a.StatusCode != 0 {
		status = &a.StatusCode
	}
	lastError := nullIfEmpty(truncateText(a.Error, maxAttemptErrorBytes))
	// The job's update numbers the attempt (recorded_attempts); an owned
	// job also moves on: dead when exhausted, else pending at the retry.
	jobUpdate := `UPDATE delivery_jobs SET recorded_attempts = recorded_attempts + 1 WHERE id = $1 RETURNING recorded_attempts`
	if res.Owned {
		res.Dead = a.Retry.Exhausted
		jobUpdate = `
UPDATE delivery_jobs SET
    state = CASE WHEN $9 THEN 'dead' ELSE 'pending' END,
    dead_reason = CASE WHEN $9 THEN 'exhausted' END,
    dead_at = CASE WHEN $9 THEN $8::timestamptz END,
    next_attempt_at = CASE WHEN $9 THEN next_attempt_at ELSE $10 END,
    attempts = attempts + 1, recorded_attempts = recorded_attempts + 1,
    lease_owner = NULL, lease_until = NULL, last_error = $6, last_status = $5, updated_at = $8
WHERE id = $1
RETURNING recorded_attempts`
	}
	args := []any{a.JobID, a.DeliveryID, a.StartedAt, max(a.Duration.Milliseconds(), 0), status, lastError,
		responseSnippet(a.Response)}
	if res.Owned {
		args = append(args, finished, res.Dead, a.Retry.At)
	}
	pipe.Queue(`
WITH job AS (`+jobUpdate+`)
INSERT INTO delivery_attempts (id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet)
SELECT $2, $1, job.recorded_attempts, $3, $4, 'failed', $5, $6, $7 FROM job
RETURNING attempt`, args...)
	if res.AutoDisabled {
		pipe.Queue(`
UPDATE subscriptions SET failing_since = $2, last_failure_at = $3, enabled = false,
    disabled_reason = 'auto_disabled', updated_at = `+nextVersion("$3")+`
WHERE id = $1`, a.SubscriptionID, span.FailingSince, span.LastFailureAt)
		pipe.Queue(`
UPDATE delivery_jobs SET state = 'dead', dead_reason = 'subscription_disabled', dead_at = $2, updated_at = $2
WHERE subscription_id = $1 AND state = 'pending'`, a.SubscriptionID, finished)
	} else {
		pipe.Queue(`UPDATE subscriptions SET failing_since = $2, last_failure_at = $3 WHERE id = $1`,
			a.SubscriptionID, span.FailingSince, span.LastFailureAt)
	}
	results := tx.SendBatch(ctx, pipe)
	if err := results.QueryRow().Scan(&res.Number); err != nil {
		_ = results.Close()
		return CompleteResult{}, err
	}
	if _, err := results.Exec(); err != nil {
		_ = results.Close()
		return CompleteResult{}, err
	}
	if res.AutoDisabled {
		tag, err := results.Exec()
		if err != nil {
			_ = results.Close()
			return CompleteResult{}, err
		}
		res.ShedJobs = tag.RowsAffected()
	}
	return res, results.Close()
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// Shed hands a claimed job back without an attempt, due again at retryAt:
// its destination's breaker is open (SPEC §3.4). attempts is unchanged and
// no attempt is recorded. It reports false when the job was no longer this
// owner's to hand back.
func (s *Store) Shed(ctx context.Context, jobID uuid.UUID, owner string, retryAt time.Time) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `
UPDATE delivery_jobs SET state = 'pending', next_attempt_at = $3, lease_owner = NULL, lease_until = NULL, updated_at = now()
WHERE id = $1 AND state = 'in_flight' AND lease_owner = $2`, jobID, owner, retryAt)
	if err != nil {
		return false, classify(fmt.Errorf("shed job %s: %w", jobID, err))
	}
	return tag.RowsAffected() == 1, nil
}

// Release hands claimed jobs back untouched and due as they were: pending,
// no attempt spent, no recovery counted. It is for jobs this owner claimed
// but will not attempt (shutdown, or a lease too short for the attempt),
// and reports how many were still this owner's to hand back.
func (s *Store) Release(ctx context.Context, owner string, jobIDs []uuid.UUID) (int64, error) {
	if len(jobIDs) == 0 {
		return 0, nil
	}
	tag, err := s.Pool.Exec(ctx, `
UPDATE delivery_jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL, updated_at = now()
WHERE id = ANY($1) AND state = 'in_flight' AND lease_owner = $2`, jobIDs, owner)
	if err != nil {
		return 0, classify(fmt.Errorf("release %d claimed jobs: %w", len(jobIDs), err))
	}
	return tag.RowsAffected(), nil
}

// recoverBatch bounds one recovery statement, so a mass expiry (a whole
// process died) is recovered in short transactions.
const recoverBatch = 1000

// Recovered counts what RecoverExpiredLeases did.
type Recovered struct {
	Retried  int // back to pending, due at once
	Poisoned int // dead, poison
}

// RecoverExpiredLeases returns jobs whose lease ended before now without a
// recorded result — their worker died or lost the database — to pending,
// due at once, counting a recovery. A job already recovered
// poisonThreshold times becomes dead with reason poison instead (SPEC
// §3.3: recovered five times by default, then dead-lettered), so one job
// that kills its worker cannot hold workers forever. Rows a completing
// worker has locked are left for the next pass.
func (s *Store) RecoverExpiredLeases(ctx context.Context, now time.Time, poisonThreshold int) (Recovered, error) {
	poisonThreshold = max(poisonThreshold, 1)
	var total Recovered
	for {
		rows, err := s.Pool.Query(ctx, `
UPDATE delivery_jobs j SET
    recoveries = CASE WHEN j.recoveries >= $2 THEN j.recoveries ELSE j.recoveries + 1 END,
    state = CASE WHEN j.recoveries >= $2 THEN 'dead' ELSE 'pending' END,
    dead_reason = CASE WHEN j.recoveries >= $2 THEN 'poison' END,
    dead_at = CASE WHEN j.recoveries >= $2 THEN $1::timestamptz END,
    last_error = CASE WHEN j.recoveries >= $2
                      THEN 'its lease expired ' || (j.recoveries + 1) || ' times without a recorded attempt'
                      ELSE j.last_error END,
    next_attempt_at = $1, lease_owner = NULL, lease_until = NULL, updated_at = $1
WHERE j.id IN (
    SELECT id FROM delivery_jobs
    WHERE state = 'in_flight' AND lease_until < $1
    ORDER BY lease_until
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
RETURNING j.state`, now, poisonThreshold, recoverBatch)
		if err != nil {
			return total, classify(fmt.Errorf("recover expired leases: %w", err))
		}
		var state string
		n := 0
		_, err = pgx.ForEachRow(rows, []any{&state}, func() error {
			n++
			if state == JobDead {
				total.Poisoned++
			} else {
				total.Retried++
			}
			return nil
		})
		if err != nil {
			return total, classify(fmt.Errorf("recover expired leases: %w", err))
		}
		if n < recoverBatch {
			return total, nil
		}
	}
}

// DueBacklog counts the pending jobs due at now, for a gauge. It reads the
// partial index of pending jobs only.
func (s *Store) DueBacklog(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_jobs WHERE state = 'pending' AND next_attempt_at <= $1`, now).Scan(&n)
	if err != nil {
		return 0, classify(fmt.Errorf("count due jobs: %w", err))
	}
	return n, nil
}

// JobsListener receives the notifications ingest sends on JobsChannel. It
// holds a connection of its own, outside the pool, for as long as it lives.
type JobsListener struct {
	conn *pgx.Conn
}

// ListenJobs opens a connection with the pool's settings and LISTENs on
// JobsChannel.
func (s *Store) ListenJobs(ctx context.Context) (*JobsListener, error) {
	conn, err := pgx.ConnectConfig(ctx, s.Pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, classify(fmt.Errorf("listen for new jobs: %w", err))
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{JobsChannel}.Sanitize()); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, classify(fmt.Errorf("listen for new jobs: %w", err))
	}
	return &JobsListener{conn: conn}, nil
}

// Wait blocks until a notification arrives, ctx ends or the connection is
// lost; after an error other than ctx's the listener is useless and should
// be closed and opened again.
func (l *JobsListener) Wait(ctx context.Context) error {
	_, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return ctxErr
		}
		return classify(fmt.Errorf("wait for new jobs: %w", err))
	}
	return nil
}

// Close ends the listener's connection.
func (l *JobsListener) Close(ctx context.Context) error {
	return l.conn.Close(ctx)
}

// truncateText cuts s to at most limit bytes on a character boundary.
func truncateText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut]
}
