package queue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/routing"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// RecoverRange selects what a recover looks at (docs/api.md, Recover): one
// subscription's tenant's events received in [Since, Until).
type RecoverRange struct {
	TenantID       string
	SubscriptionID uuid.UUID
	Since, Until   time.Time
}

// RecoverResult counts a recover: Matched events of the range match the
// subscription now and have no succeeded delivery for it; Queued of them
// got a pending job in this call (none on a dry run, none for an event
// whose job is pending or in flight already).
type RecoverResult struct {
	Matched int64
	Queued  int64
}

// RecoverProgress is how far a recover has come: Done of Total seqs of the
// range are behind it. Both are estimates of the work, not event counts.
type RecoverProgress struct {
	Done, Total int64
	RecoverResult
}

// DefaultRecoverBatch is how many of the tenant's events one transaction of
// a recover reads.
const DefaultRecoverBatch = 1000

// Recover gives every event of r that matches the subscription now (as
// route decides, the subscription taken as enabled and verified whatever
// its state) and has no succeeded delivery a pending job: a dead
// job for the event goes back to pending as a replay would take it (its
// attempt history kept, a fresh budget), otherwise a new job is created.
// An event with a pending or in-flight job is counted but left alone, so a
// recover is safe to repeat.
//
// It works in transactions of at most batch events, each of which locks
// the subscription row (FOR NO KEY UPDATE): two recovers of one
// subscription take turns batch by batch and never queue an event twice,
// a concurrent dead-letter replay (FOR SHARE) waits for the batch, and a
// delete either waits or wins, and then the next batch finds the
// subscription gone (pg.ErrNotFound, with what was done so far). progress,
// if not nil, is called after each batch.
//
// The inbox is partitioned by seq ranges of UTC days (pg.DaySeqBase), and a
// day's events may take seqs of the day before until the maintainer moves
// the sequence, so the seq range is bounded from below by the newest
// events before since's day and from above by the day after until's.
func (s *Store) Recover(ctx context.Context, r RecoverRange, route routing.Router, now time.Time, dryRun bool, batch int, progress func(RecoverProgress)) (RecoverResult, error) {
	if batch < 1 {
		batch = DefaultRecoverBatch
	}
	lo, err := s.recoverLowSeq(ctx, r.Since)
	if err != nil {
		return RecoverResult{}, pg.Classify(fmt.Errorf("recover: %w", err))
	}
	hi := pg.DaySeqBase(r.Until) + 2<<pg.SeqDayBits // until's day and one spilled into
	if last, err := pg.LastSeq(ctx, s.Pool); err != nil {
		return RecoverResult{}, pg.Classify(fmt.Errorf("recover: %w", err))
	} else if last < hi {
		hi = last + 1
	}
	var res RecoverResult
	after := lo - 1
	for after < hi-1 {
		var n int
		err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
			var err error
			var step RecoverResult
			step, n, after, err = recoverStep(ctx, tx, r, route, after, hi, now, dryRun, batch)
			if err == nil {
				res.Matched += step.Matched
				res.Queued += step.Queued
			}
			return err
		})
		if err != nil {
			return res, pg.Classify(fmt.Errorf("recover: %w", err))
		}
		if n < batch {
			after = hi - 1
		}
		if progress != nil {
			progress(RecoverProgress{Done: min(after+1, hi) - lo, Total: hi - lo, RecoverResult: res})
		}
	}
	return res, nil
}

// recoverLowSeq is the lowest seq an event received at or after since can
// have: since's day's base, lowered by a day's range while the newest event
// below it was received after since (less pg.ReceivedAtSkew). With the sequence
// never moved (no maintainer ran) that reaches the lowest seqs.
func (s *Store) recoverLowSeq(ctx context.Context, since time.Time) (int64, error) {
	lo := pg.DaySeqBase(since)
	for lo > 0 {
		var seq int64
		var at time.Time
		err := s.Pool.QueryRow(ctx, recoverLowSeqSQL, pgx.StrictNamedArgs{"lo": lo}).
			Scan(&seq, &at)
		if errors.Is(err, pgx.ErrNoRows) {
			return lo, nil
		}
		if err != nil {
			return 0, err
		}
		if at.Before(since.Add(-pg.ReceivedAtSkew)) {
			return lo, nil
		}
		lo = max(seq>>pg.SeqDayBits<<pg.SeqDayBits, 0)
	}
	return 0, nil
}

// recoverEvents reads a recover batch: the bounds on seq let a generic plan
// prune the inbox's partitions at run time to the days of the range. The
// lower bound is inclusive because pruning does not reason about integers:
// seq > base-1 would keep the day before base's partition in the plan.
//
//go:embed sql/recover_events.sql
var recoverEvents string

// OperationalSource is the source of the hub's own operational events
// (pg.OperationalSource).
const OperationalSource = pg.OperationalSource

// recoverStep does one transaction's share of a recover: the tenant's
// events after seq after (up to batch of them, below hi). It returns how
// many events it read and the last seq read.
func recoverStep(ctx context.Context, tx pgx.Tx, r RecoverRange, route routing.Router, after, hi int64, now time.Time, dryRun bool, batch int) (RecoverResult, int, int64, error) {
	var (
		sub      routing.Subscription
		expr     string
		version  time.Time
		sinkType string
		deleted  bool
		ordering string
	)
	err := tx.QueryRow(ctx, lockRecoveredSubscriptionSQL, pgx.StrictNamedArgs{"subscription_id": r.SubscriptionID, "tenant_id": r.TenantID}).
		Scan(&sub.TenantID, &sinkType, &sub.EventTypes, &sub.SchemaMajor, &sub.Origin, &expr, &version, &deleted, &ordering)
	if err != nil {
		return RecoverResult{}, 0, after, err
	}
	if deleted {
		return RecoverResult{}, 0, after, fmt.Errorf("%w: subscription %s was deleted", pg.ErrNotFound, r.SubscriptionID)
	}
	if sinkType == "pull" {
		return RecoverResult{}, 0, after, fmt.Errorf("%w: subscription %s is a pull subscription", pg.ErrConflict, r.SubscriptionID)
	}
	// Matching now, whatever the subscription's state: what it missed
	// while disabled or unverified is what a recover is for.
	sub.Enabled, sub.VerificationState = true, routing.VerificationActive
	// A stored filter that no longer compiles matches nothing, as at
	// ingest.
	candidate := routing.Candidate{ID: r.SubscriptionID, Subscription: sub, Ordering: ordering}
	if expr != "" {
		candidate.Filter, candidate.FilterErr = filters.Program(r.SubscriptionID, version, expr)
	}

	rows, err := tx.Query(ctx, recoverEvents, pgx.NamedArgs{
		"from": after + 1, "hi": hi, "tenant": r.TenantID, "since": r.Since, "until": r.Until,
		"major": sub.SchemaMajor, "origin": sub.Origin, "payload": expr != "", "batch": batch,
		// An operational event is never delivered to the subscription it
		// is about (internal/opevents Receives), recovered or not.
		"operational_source": OperationalSource, "subscription": r.SubscriptionID.String(),
	})
	if err != nil {
		return RecoverResult{}, 0, after, err
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (routing.NewEvent, error) {
		var e routing.NewEvent
		a := &e.Attributes
		err := row.Scan(&e.Seq, &a.ID, &a.Key, &a.Type, &a.Source, &a.Subject, &a.Time, &a.SchemaVersion,
			&e.SchemaMajor, &a.DataContentType, &a.Data)
		a.TenantID = r.TenantID
		e.TenantID, e.Key, e.Source = r.TenantID, a.Key, a.Source
		return e, err
	})
	if err != nil || len(events) == 0 {
		return RecoverResult{}, 0, after, err
	}
	last := events[len(events)-1].Seq

	jobs, err := recoverJobs(ctx, tx, r.SubscriptionID, events[0].Seq, last)
	if err != nil {
		return RecoverResult{}, 0, after, err
	}
	var res RecoverResult
	var revive []uuid.UUID
	var newSeqs []int64
	var newKeys []*string // ordering keys of the new jobs, as ingest keys them
	// A filter that fails on an event (a filter failure) matches nothing
	// here: recover queues only what the subscription wants.
	routes := route(events, map[string][]routing.Candidate{r.TenantID: {candidate}})
	for _, e := range routes.Jobs {
		j := jobs[e.Seq]
		if j.succeeded {
			continue
		}
		res.Matched++
		switch {
		case j.live || dryRun:
		case j.dead != uuid.Nil:
			revive = append(revive, j.dead)
		default:
			newSeqs = append(newSeqs, e.Seq)
			newKeys = append(newKeys, e.OrderingKey)
		}
	}
	if len(revive) > 0 {
		tag, err := tx.Exec(ctx, reviveDeadJobsSQL, pgx.StrictNamedArgs{"revive": revive, "now": now})
		if err != nil {
			return RecoverResult{}, 0, after, err
		}
		res.Queued += tag.RowsAffected()
	}
	if len(newSeqs) > 0 {
		ids := make([]uuid.UUID, len(newSeqs))
		for i := range ids {
			ids[i] = newJobID(now)
		}
		tag, err := tx.Exec(ctx, insertMissingJobsSQL,
			pgx.StrictNamedArgs{"ids": ids, "new_seqs": newSeqs, "tenant_id": r.TenantID, "subscription_id": r.SubscriptionID, "now": now, "new_keys": newKeys})
		if err != nil {
			return RecoverResult{}, 0, after, err
		}
		res.Queued += tag.RowsAffected()
	}
	if res.Queued > 0 {
		if err := pg.NotifyJobs(ctx, tx); err != nil {
			return RecoverResult{}, 0, after, err
		}
	}
	return res, len(events), last, nil
}

// recoverJob is what the jobs of one event for the subscription say.
type recoverJob struct {
	succeeded, live bool
	dead            uuid.UUID // a dead job to send back, Nil when none
}

// recoverJobs reads the subscription's jobs of the events [first, last]:
// one range of the (subscription_id, event_seq) index per partition.
func recoverJobs(ctx context.Context, tx pgx.Tx, subscription uuid.UUID, first, last int64) (map[int64]recoverJob, error) {
	rows, err := tx.Query(ctx, recoverJobsSQL, pgx.StrictNamedArgs{"subscription": subscription, "first": first, "last": last})
	if err != nil {
		return nil, err
	}
	jobs := map[int64]recoverJob{}
	var (
		seq   int64
		state string
		id    uuid.UUID
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &state, &id}, func() error {
		j := jobs[seq]
		switch state {
		case "succeeded":
			j.succeeded = true
		case "pending", "in_flight":
			j.live = true
		case "dead":
			j.dead = id
		}
		jobs[seq] = j
		return nil
	})
	return jobs, err
}

//go:embed sql/recover_low_seq.sql
var recoverLowSeqSQL string

//go:embed sql/lock_recovered_subscription.sql
var lockRecoveredSubscriptionSQL string

//go:embed sql/revive_dead_jobs.sql
var reviveDeadJobsSQL string

//go:embed sql/insert_missing_jobs.sql
var insertMissingJobsSQL string

//go:embed sql/recover_jobs.sql
var recoverJobsSQL string
