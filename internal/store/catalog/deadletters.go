package catalog

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
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

// deadLetterArgs are the parameters of the selection shared by listing
// and replay (the filter's fields), over jobs as j and subscriptions as s.
func deadLetterArgs(f DeadLetterFilter) pgx.StrictNamedArgs {
	var subscription *uuid.UUID
	if f.SubscriptionID != uuid.Nil {
		subscription = &f.SubscriptionID
	}
	var ids []uuid.UUID // nil (SQL NULL) selects every job
	if len(f.IDs) > 0 {
		ids = f.IDs
	}
	return pgx.StrictNamedArgs{
		"tenant_id": f.TenantID, "subscription_id": subscription, "reason": f.Reason,
		"since": pg.NullIfZero(f.Since), "until": pg.NullIfZero(f.Until), "ids": ids,
	}
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
	args := deadLetterArgs(q.DeadLetterFilter)
	args["after_at"], args["after_id"], args["limit"] = afterAt, afterID, q.Limit+1
	rows, err := s.Pool.Query(ctx, listDeadLettersSQL, args)
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list dead letters: %w", err))
	}
	letters, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (DeadLetter, error) {
		var d DeadLetter
		return d, row.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &d.EventKey, &d.Reason, &d.Attempts,
			&d.LastError, &d.LastStatus, &d.DeadAt)
	})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list dead letters: %w", err))
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
// on pg.JobsChannel sent at commit.
func (s *Store) ReplayDeadLetters(ctx context.Context, f DeadLetterFilter, now time.Time, dryRun bool) (ReplayResult, error) {
	var res ReplayResult
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		args := deadLetterArgs(f)
		args["now"], args["dry_run"] = now, dryRun
		err := tx.QueryRow(ctx, replayDeadLettersSQL, args).
			Scan(&res.Matched, &res.Replayed)
		if err != nil || res.Replayed == 0 {
			return err
		}
		return pg.NotifyJobs(ctx, tx)
	})
	if err != nil {
		return ReplayResult{}, pg.Classify(fmt.Errorf("replay dead letters: %w", err))
	}
	return res, nil
}

//go:embed sql/list_dead_letters.sql
var listDeadLettersSQL string

//go:embed sql/replay_dead_letters.sql
var replayDeadLettersSQL string
