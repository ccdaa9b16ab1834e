package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// DeadLetterFilter selects one tenant's dead letters (docs/concepts.md, Dead letters and poison): jobs in
// state dead whose subscription still exists. A deleted subscription's
// dead jobs are history, never replayable, so they are neither listed nor
// counted: what the listing shows is exactly what a replay would touch.
// Zero-valued fields select everything.
type DeadLetterFilter struct {
	TenantID       string
	SubscriptionID uuid.UUID
	Reason         string
	// Since (inclusive) and Until (exclusive) bound dead_at.
	Since, Until time.Time
	// IDs, when not empty, keeps only these jobs.
	IDs []uuid.UUID
}

// DeadLetterPosition is where a dead-letter listing continues: after the
// job with this dead_at and id.
type DeadLetterPosition struct {
	DeadAt time.Time
	ID     uuid.UUID
}

// DeadLetterQuery selects a page of dead letters, most recently dead
// first (then by id, the order of the delivery_jobs_dead index).
type DeadLetterQuery struct {
	DeadLetterFilter
	// Limit is the most dead letters returned; at least 1.
	Limit int
	// After continues a listing; nil starts with the most recent.
	After *DeadLetterPosition
}

// DeadLetter is one dead job as the dead-letter listing shows it.
type DeadLetter struct {
	ID             uuid.UUID
	SubscriptionID uuid.UUID
	// EventID and EventKey are "" when the inbox no longer holds the event.
	EventID    string
	EventKey   string
	Reason     string
	Attempts   int
	LastError  string
	LastStatus *int
	DeadAt     time.Time
}

// ReplayResult counts a replay: Matched dead letters were selected,
// Replayed of them went back to pending in this call (fewer than Matched
// when a concurrent replay took some first; none on a dry run).
type ReplayResult struct {
	Matched  int64
	Replayed int64
}

// deadLetterWhere is the selection shared by listing and replay, over jobs
// as j and subscriptions as s; $1..$6 are the filter's fields in the order
// of deadLetterArgs.
const deadLetterWhere = `j.tenant_id = $1 AND j.state = 'dead' AND s.deleted_at IS NULL
	AND ($2::uuid IS NULL OR j.subscription_id = $2)
	AND ($3::text = '' OR j.dead_reason = $3)
	AND ($4::timestamptz IS NULL OR j.dead_at >= $4)
	AND ($5::timestamptz IS NULL OR j.dead_at < $5)
	AND ($6::uuid[] IS NULL OR j.id = ANY ($6))`

func deadLetterArgs(f DeadLetterFilter) []any {
	var subscription *uuid.UUID
	if f.SubscriptionID != uuid.Nil {
		subscription = &f.SubscriptionID
	}
	var ids []uuid.UUID // nil (SQL NULL) selects every job
	if len(f.IDs) > 0 {
		ids = f.IDs
	}
	return []any{f.TenantID, subscription, f.Reason, optionalTime(f.Since), optionalTime(f.Until), ids}
}

// optionalTime passes the zero time as SQL NULL (no bound).
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// ListDeadLetters returns a page of dead letters and whether more follow.
func (s *Store) ListDeadLetters(ctx context.Context, q DeadLetterQuery) (letters []DeadLetter, more bool, err error) {
	if q.Limit < 1 {
		return nil, false, fmt.Errorf("list dead letters: limit %d must be at least 1", q.Limit)
	}
	var afterAt *time.Time
	var afterID uuid.UUID
	if q.After != nil {
		afterAt, afterID = &q.After.DeadAt, q.After.ID
	}
	// Ordered as delivery_jobs_dead is (tenant_id, dead_at DESC, id), so a
	// page is one range scan of that index however deep the listing goes.
	args := append(deadLetterArgs(q.DeadLetterFilter), afterAt, afterID, q.Limit+1)
	rows, err := s.Pool.Query(ctx, `
		SELECT j.id, j.subscription_id, coalesce(e.id::text, ''), coalesce(e.event_key, ''),
		       j.dead_reason, j.attempts, coalesce(j.last_error, ''), j.last_status, j.dead_at
		FROM delivery_jobs j
		JOIN subscriptions s ON s.id = j.subscription_id
		LEFT JOIN events e ON e.seq = j.event_seq
		WHERE `+deadLetterWhere+`
		  AND ($7::timestamptz IS NULL OR j.dead_at < $7 OR (j.dead_at = $7 AND j.id > $8))
		ORDER BY j.dead_at DESC, j.id
		LIMIT $9`, args...)
	if err != nil {
		return nil, false, classify(fmt.Errorf("list dead letters: %w", err))
	}
	letters, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeadLetter, error) {
		var d DeadLetter
		return d, row.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &d.EventKey, &d.Reason, &d.Attempts,
			&d.LastError, &d.LastStatus, &d.DeadAt)
	})
	if err != nil {
		return nil, false, classify(fmt.Errorf("list dead letters: %w", err))
	}
	if len(letters) > q.Limit {
		return letters[:q.Limit], true, nil
	}
	return letters, false, nil
}

// ReplayDeadLetters puts the selected dead letters back to pending, due at
// now, with a fresh attempt budget (attempts and recoveries at zero) and
// their attempt history kept: delivery_attempts numbers each new attempt
// after the job's highest recorded one (see Complete), so numbering goes on
// from where it stopped. last_error and last_status stay until the next
// attempt replaces them, so the reason a job died stays readable meanwhile.
// A dry run only counts.
//
// A job is replayed once however many replays race: the UPDATE re-checks
// state = 'dead' on the row it locks, so a concurrent replay that got there
// first leaves nothing for this one. The subscriptions are locked FOR
// SHARE, so a concurrent delete either waits for the replay (and then
// cancels the replayed jobs with the other pending ones) or wins, and the
// re-checked deleted_at keeps its jobs out. Dispatch is woken by a NOTIFY
// on JobsChannel sent at commit.
func (s *Store) ReplayDeadLetters(ctx context.Context, f DeadLetterFilter, now time.Time, dryRun bool) (ReplayResult, error) {
	var res ReplayResult
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		args := append(deadLetterArgs(f), now, dryRun)
		err := tx.QueryRow(ctx, `
			WITH matched AS (
				SELECT j.id FROM delivery_jobs j
				JOIN subscriptions s ON s.id = j.subscription_id
				WHERE `+deadLetterWhere+`
				FOR SHARE OF s
			), replayed AS (
				UPDATE delivery_jobs j
				SET state = 'pending', attempts = 0, recoveries = 0, next_attempt_at = $7,
				    dead_reason = NULL, dead_at = NULL, updated_at = $7
				FROM matched m
				WHERE j.id = m.id AND j.state = 'dead' AND NOT $8::boolean
				RETURNING j.id
			)
			SELECT (SELECT count(*) FROM matched), (SELECT count(*) FROM replayed)`, args...).
			Scan(&res.Matched, &res.Replayed)
		if err != nil || res.Replayed == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, JobsChannel)
		return err
	})
	if err != nil {
		return ReplayResult{}, classify(fmt.Errorf("replay dead letters: %w", err))
	}
	return res, nil
}
