package queue

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// maxAttemptErrorBytes bounds the error text kept per attempt and job.
const maxAttemptErrorBytes = 1000

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
	// OrderingKey is the claimed job's (ClaimedJob.OrderingKey): a success
	// releases the next job of its key. A failure reads it from the job.
	OrderingKey *string
	// EventID is the job's event's id, which a dead letter is reported
	// by (FailureReport).
	EventID string
}

// Retry is the schedule's verdict after a failed attempt.
type Retry struct {
	At        time.Time
	Exhausted bool
}

// FailureSpan is a subscription's open failure span: failing_since and
// last_failure_at, both zero when none is open.
type FailureSpan struct {
	FailingSince  time.Time
	LastFailureAt time.Time
}

// AutoDisable weighs a failed attempt that finished at finished against its
// subscription's failure span: it returns the span to store and whether the
// subscription is to be switched off (docs/concepts.md, Auto-disable).
// Complete calls it inside the failure's transaction, on the span it locked,
// so the decision and its writes are one step. The dispatcher passes its
// auto-disable policy; the store keeps no rule of its own.
type AutoDisable func(span FailureSpan, finished time.Time) (FailureSpan, bool)

// FailureReport writes, in the transaction of a failure that Complete
// records, how what it did is reported (operational events,
// docs/operational-events.md); its error rolls the failure back. A
// transaction that reports takes the ingest lock shared first
// (ShareIngestLock).
type FailureReport func(ctx context.Context, tx pgx.Tx, f RecordedFailure) error

// RecordedFailure is what a failure did, for its report.
type RecordedFailure struct {
	Attempt          Attempt
	TenantID         string
	SubscriptionName string
	// Live says the subscription was enabled and not deleted when the
	// failure was recorded.
	Live bool
	// Span is the failure span after the failure; SpanFailures the failed
	// attempts in it, this one included; SpanReported whether the span
	// was already reported failing.
	Span         FailureSpan
	SpanFailures int
	SpanReported bool
	Result       CompleteResult
	// ShedSeqs are the seqs of the first MaxReportedShed jobs an
	// auto-disable shed (Result.ShedJobs in all), in seq order.
	ShedSeqs []int64
}

// MaxReportedShed is how many of the jobs an auto-disable sheds are named
// to its report.
const MaxReportedShed = 100

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
	// AlreadyRecorded reports that an earlier call recorded this attempt:
	// its commit went through but the answer was lost with the
	// connection, and the caller tried again. Number is the attempt's;
	// Owned, Dead and AutoDisabled are false, as this call did nothing.
	// What the earlier call did stands.
	AlreadyRecorded bool
	// Gone reports that the job no longer exists (its tenant was purged):
	// nothing was written, and there is nothing to retry.
	Gone bool
	// ReportedSpanOpen, on a success, says its subscription's failure
	// span was reported failing and is still open: the span is closed,
	// with its recovery reported, by the caller's own transaction.
	ReportedSpanOpen bool
}

// Complete records one attempt in ONE transaction: the attempt (a
// delivery_attempts row, or for a success that moves its job, columns of
// the job), the job's transition (only while the job is still in flight under
// a.Owner's lease) and the subscription's failure span. A success is
// recorded as CompleteSuccesses records it: the job succeeds and the span
// closes. A failure goes back to pending at
// a.Retry.At or, when exhausted, dead; it opens or extends the span, and
// when autoDisable says so, the subscription is auto-disabled and its
// queued jobs dead-lettered (subscription_disabled) in the same
// transaction.
func (s *Store) Complete(ctx context.Context, a Attempt, autoDisable AutoDisable) (CompleteResult, error) {
	return s.CompleteReported(ctx, a, autoDisable, nil)
}

// CompleteReported is Complete with a failure's report, nil for none.
func (s *Store) CompleteReported(ctx context.Context, a Attempt, autoDisable AutoDisable, report FailureReport) (CompleteResult, error) {
	if a.OK {
		res, err := s.CompleteSuccesses(ctx, []Attempt{a})
		if err != nil {
			return CompleteResult{}, err
		}
		return res[0], nil
	}
	var res CompleteResult
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		res, err = completeFailure(ctx, tx, a, autoDisable, report)
		return err
	})
	if err != nil {
		if recorded, ok := s.alreadyRecorded(ctx, []Attempt{a}, err); ok {
			return recorded[0], nil
		}
		return CompleteResult{}, pg.Classify(fmt.Errorf("record attempt of job %s: %w", a.JobID, err))
	}
	return res, nil
}

// alreadyRecorded tells a retry after a lost commit answer from a real
// failure: when recording attempts failed on the attempts' primary key,
// it looks them up, and ok is true with their results when every one of
// them is there. Delivery ids are drawn once per attempt, so only an
// earlier call with the same attempts can have written them; recording
// is one transaction, so that call wrote all of them or none. A success
// folded into its job has no row to collide with: recording it again
// fails the same way by hand (record_successes.sql), and the lookup finds
// it in its job.
func (s *Store) alreadyRecorded(ctx context.Context, attempts []Attempt, err error) ([]CompleteResult, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" || // unique_violation
		!strings.HasPrefix(pgErr.TableName, "delivery_attempts") || !strings.HasSuffix(pgErr.ConstraintName, "_pkey") {
		return nil, false
	}
	ids, started := make([][16]byte, len(attempts)), make([]time.Time, len(attempts))
	at := make(map[uuid.UUID]int, len(attempts))
	for i, a := range attempts {
		ids[i], started[i] = a.DeliveryID, a.StartedAt
		at[a.DeliveryID] = i
	}
	rows, qerr := s.Pool.Query(ctx, alreadyRecordedSQL, pgx.StrictNamedArgs{"ids": ids, "started": started})
	if qerr != nil {
		return nil, false
	}
	results := make([]CompleteResult, len(attempts))
	var (
		id     uuid.UUID
		number int
		found  int
	)
	if _, qerr := pgx.ForEachRow(rows, []any{&id, &number}, func() error {
		results[at[id]] = CompleteResult{Number: number, AlreadyRecorded: true}
		found++
		return nil
	}); qerr != nil || found != len(attempts) {
		return nil, false
	}
	return results, true
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
		queueSuccessRound(pipe, attempts, round, results)
	}
	// The keys' next jobs are released after the successes, in the same
	// transaction; a key whose job was not this owner's to move has the
	// same head as before, and nothing to release.
	var keys orderingKeys
	var last time.Time
	for _, a := range attempts {
		keys.add(a.SubscriptionID, a.OrderingKey)
		last = maxTime(last, a.StartedAt.Add(a.Duration))
	}
	if !keys.empty() {
		pipe.Queue(releaseHeadsSQL, keys.args(last))
	}
	err := s.Pool.SendBatch(ctx, pipe).Close()
	if err != nil {
		if recorded, ok := s.alreadyRecorded(ctx, attempts, err); ok {
			return recorded, nil
		}
		return nil, pg.Classify(fmt.Errorf("record %d successful attempts: %w", len(attempts), err))
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
// owned moves a job still leased to the attempt's owner to succeeded and
// folds the attempt into it (its id, number, start, duration and response
// as columns of the job, migration 24: no attempt row, about 5.6% less WAL
// per delivery); late only numbers an attempt whose lease was recovered
// meanwhile (an update that touches no indexed column, so it stays on its
// page), and its attempt is inserted as a row. Either way the job's update
// takes its row lock and numbers the attempt from recorded_attempts, so
// numbers stay dense and ordered whichever process records them, without
// a separate lock or a max() over the job's attempts. late looks only at
// the attempts owned did not take, none in the common case, so the jobs
// are not looked up a second time. j.id = ANY(@job_ids) lets the planner find
// the jobs by key; joined only with the unnested rows, it hashed every
// in-flight job instead. late carries it too, though its rows come from u:
// it prunes, when the statement is planned, the day partitions none of the
// jobs is in, which late's join alone left to plan with all their indexes
// (1.0 of 1.4 ms per round with a week of days, against 0.35 pruned). The
// in-flight state is compared with a column of u (held_state), not a
// constant: against a constant the planner read the
// jobs through the partial index of leases, estimated one row from the two
// conditions together, and compared every job with every attempt in a
// nested loop, a cost that grows with the product of the two where the
// hash join grows with their sum.
//
//go:embed sql/record_successes.sql
var recordSuccesses string

// closeSpans ends the failure spans of the subscriptions a round of
// successes reached. Any successful delivery closes the span (docs/concepts.md, Auto-disable),
// also one whose lease had lapsed: the destination works either way. A
// success that finished before the span's last failure does not: recorded
// late, it must not hide a failure that came after it. Rows are locked in
// id order. A span reported failing is left open and returned: its close
// is reported as a recovery, which its caller writes in a transaction of
// its own (store/opevents CloseReportedSpan), so the statement that
// records every success stays one statement.
//
//go:embed sql/close_spans.sql
var closeSpans string

// queueSuccessRound queues the two statements that record one round of
// successes, the attempts with their jobs' transitions and the failure
// spans they close, and reads the attempts' numbers into results. The round is sorted by job id so that concurrent
// recorders lock jobs in one order.
func queueSuccessRound(pipe *pgx.Batch, attempts []Attempt, round []int, results []CompleteResult) {
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
		errs[k] = pg.NullIfZero(truncateText(a.Error, maxAttemptErrorBytes))
		responses[k] = responseSnippet(a.Response)
	}
	pg.OnRows(pipe.Queue(recordSuccesses, pgx.StrictNamedArgs{
		"ids": ids, "job_ids": jobs, "owners": owners, "started": started, "finished": finished,
		"durations_ms": durations, "statuses": statuses, "errors": errs, "responses": responses,
	}), "record the successes", func(rows pgx.Rows) error { return scanSuccessRound(rows, attempts, round, results) })
	pg.OnRows(pipe.Queue(closeSpans, pgx.StrictNamedArgs{"subs": subs, "finished": finished}), "close the failure spans", func(rows pgx.Rows) error {
		reported, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		for _, i := range round {
			results[i].ReportedSpanOpen = results[i].ReportedSpanOpen || slices.Contains(reported, attempts[i].SubscriptionID)
		}
		return err
	})
}

// scanSuccessRound reads the rows of one round's recordSuccesses into
// results.
func scanSuccessRound(rows pgx.Rows, attempts []Attempt, round []int, results []CompleteResult) error {
	byDelivery := make(map[uuid.UUID]int, len(round))
	for _, i := range round {
		byDelivery[attempts[i].DeliveryID] = i
	}
	var (
		id     uuid.UUID
		number int
		owned  bool
	)
	recorded := make(map[uuid.UUID]bool, len(round))
	if _, err := pgx.ForEachRow(rows, []any{&id, &number, &owned}, func() error {
		results[byDelivery[id]].Number, results[byDelivery[id]].Owned = number, owned
		recorded[id] = true
		return nil
	}); err != nil {
		return err
	}
	// Only a tenant purge deletes jobs; an attempt of one is not kept.
	for _, i := range round {
		results[i].Gone = !recorded[attempts[i].DeliveryID]
	}
	return nil
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

func completeFailure(ctx context.Context, tx pgx.Tx, a Attempt, autoDisable AutoDisable, report FailureReport) (CompleteResult, error) {
	finished := a.StartedAt.Add(a.Duration)
	var (
		res                  CompleteResult
		live                 bool
		failingSince, lastAt *time.Time
		orderingKey          *string
		rec                  = RecordedFailure{Attempt: a}
	)
	// A failure that reports takes the ingest lock before its row locks,
	// in the same round trip.
	lock := &pgx.Batch{}
	if report != nil {
		pg.OnExec(lock.Queue(shareIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": pg.IngestLockKey}), "take the ingest lock", nil)
	}
	lock.Queue(lockFailedJobSQL, pgx.StrictNamedArgs{"job_id": a.JobID, "owner": a.Owner}).QueryRow(func(row pgx.Row) error {
		return row.Scan(&res.Owned, &live, &failingSince, &lastAt, &orderingKey, &rec.TenantID, &rec.SubscriptionName, &rec.SpanFailures, &rec.SpanReported)
	})
	err := tx.SendBatch(ctx, lock).Close()
	if errors.Is(err, pgx.ErrNoRows) {
		// Only a tenant purge deletes jobs; an attempt of one is not kept.
		return CompleteResult{Gone: true}, nil
	}
	if err != nil {
		return CompleteResult{}, err
	}
	span, disable := autoDisable(FailureSpan{FailingSince: pg.ValueOrZero(failingSince), LastFailureAt: pg.ValueOrZero(lastAt)}, finished)
	res.AutoDisabled = live && disable
	rec.Live, rec.Span = live, span
	if failingSince == nil {
		rec.SpanFailures, rec.SpanReported = 0, false
	}
	rec.SpanFailures++

	pipe := &pgx.Batch{}
	var status *int
	if a.StatusCode != 0 {
		status = &a.StatusCode
	}
	lastError := pg.NullIfZero(truncateText(a.Error, maxAttemptErrorBytes))
	// The job's update numbers the attempt (recorded_attempts); an owned
	// job also moves on: dead when exhausted, else pending at the retry.
	recordFailure := completeFailureLateSQL
	if res.Owned {
		res.Dead = a.Retry.Exhausted
		recordFailure = completeFailureOwnedSQL
	}
	args := pgx.StrictNamedArgs{
		"job_id": a.JobID, "delivery_id": a.DeliveryID, "started_at": a.StartedAt,
		"duration_ms": max(a.Duration.Milliseconds(), 0), "status": status, "last_error": lastError,
		"response": responseSnippet(a.Response),
	}
	if res.Owned {
		args["finished"], args["dead"], args["retry_at"] = finished, res.Dead, a.Retry.At
	}
	pg.OnRow(pipe.Queue(recordFailure, args), "record the attempt", func(row pgx.Row) error { return row.Scan(&res.Number) })
	if res.AutoDisabled {
		pipe.Queue(autoDisableSubscriptionSQL, pgx.StrictNamedArgs{"subscription_id": a.SubscriptionID, "failing_since": span.FailingSince, "last_failure_at": span.LastFailureAt, "span_failures": rec.SpanFailures})
		pg.OnRow(pipe.Queue(completeFailureShedPendingSQL, pgx.StrictNamedArgs{"subscription_id": a.SubscriptionID, "finished": finished, "first_seqs": MaxReportedShed}),
			"shed the pending jobs", func(row pgx.Row) error { return row.Scan(&res.ShedJobs, &rec.ShedSeqs) })
	} else {
		pipe.Queue(extendFailureSpanSQL,
			pgx.StrictNamedArgs{"subscription_id": a.SubscriptionID, "failing_since": span.FailingSince, "last_failure_at": span.LastFailureAt, "span_failures": rec.SpanFailures})
	}
	// The job left in_flight: its key's head may now be a job parked
	// behind it (dead-lettered), or one it held from in flight (a replayed
	// dead letter of lower seq, when it goes back to pending).
	var keys orderingKeys
	if res.Owned {
		keys.add(a.SubscriptionID, orderingKey)
	}
	if !keys.empty() {
		pipe.Queue(releaseHeadsSQL, keys.args(finished))
	}
	if err := tx.SendBatch(ctx, pipe).Close(); err != nil {
		return CompleteResult{}, err
	}
	if report != nil {
		rec.Result = res
		if err := report(ctx, tx, rec); err != nil {
			return CompleteResult{}, fmt.Errorf("report the failure: %w", err)
		}
	}
	return res, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
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

//go:embed sql/already_recorded.sql
var alreadyRecordedSQL string

//go:embed sql/lock_failed_job.sql
var lockFailedJobSQL string

//go:embed sql/auto_disable_subscription.sql
var autoDisableSubscriptionSQL string

//go:embed sql/complete_failure_late.sql
var completeFailureLateSQL string

//go:embed sql/complete_failure_owned.sql
var completeFailureOwnedSQL string

//go:embed sql/complete_failure_shed_pending.sql
var completeFailureShedPendingSQL string

//go:embed sql/extend_failure_span.sql
var extendFailureSpanSQL string
