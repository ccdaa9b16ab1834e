package lifecycle

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// RetentionPolicy says how long each kind of row is kept
// (STREAMING_HUB_RETENTION_*).
type RetentionPolicy struct {
	Events     time.Duration // inbox events, their ids and pull entries
	Deliveries time.Duration // terminal jobs and attempts
	Quarantine time.Duration
}

func (p RetentionPolicy) of(t managedTable) time.Duration {
	switch t.Name {
	case TableDeliveryJobs, TableDeliveryAttempts:
		return p.Deliveries
	case TableQuarantine:
		return p.Quarantine
	}
	return p.Events
}

// Removal is one step of a prune: a whole partition dropped, or the expired
// rows of a catch-all partition deleted.
type Removal struct {
	Table     string
	Partition string
	Rows      int64
	Bytes     int64 // the partition's size; 0 for rows deleted from a catch-all
	Whole     bool  // the partition is dropped
}

// Kept is an expired partition that must stay: Reason says what needs it.
type Kept struct {
	Table     string
	Partition string
	Reason    string
}

// PruneReport is what a prune removed, or on a dry run would remove.
type PruneReport struct {
	DryRun   bool
	Removals []Removal
	Kept     []Kept
	// ExpiredCursors counts pull cursors that had unread entries among
	// those removed; their next read says events_expired.
	ExpiredCursors int64
}

// retentionLockKey is the session advisory lock one process holds while it
// creates partitions, moves the inbox sequence or prunes, so that any number of `hubctl serve`
// and `hubctl storage prune` run it one at a time. "hubret" in ASCII.
const retentionLockKey int64 = 0x6875_6272_6574

// ErrRetentionBusy means another process holds the retention lock.
var ErrRetentionBusy = fmt.Errorf("%w: another process is running retention now", pg.ErrConflict)

// WithRetentionLock runs fn while holding the retention lock, or returns
// ErrRetentionBusy at once when another process holds it. The lock is a
// session lock on one connection: if the process dies, the server ends
// the session and the lock is free again.
func (s *Store) WithRetentionLock(ctx context.Context, fn func() error) error {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return pg.Classify(fmt.Errorf("take the retention lock: %w", err))
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, tryRetentionLockSQL, pgx.StrictNamedArgs{"retention_lock_key": retentionLockKey}).Scan(&got); err != nil {
		return pg.Classify(fmt.Errorf("take the retention lock: %w", err))
	}
	if !got {
		return ErrRetentionBusy
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), releaseRetentionLockSQL, pgx.StrictNamedArgs{"retention_lock_key": retentionLockKey}); err != nil {
			// The lock must not outlive the run: drop the session.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	return fn()
}

// Prune removes what retention no longer keeps, as of now, in this order:
// finished jobs, attempts and quarantine by age; then the inbox's daily
// partitions with their pull entries, unless a live job or a dead letter
// still needs one of their events; then the event ids no retained event
// has; last the Idempotency-Key rows past their window. A dry run only
// reports. The caller holds the retention lock (WithRetentionLock).
func (s *Store) Prune(ctx context.Context, now time.Time, policy RetentionPolicy, dryRun bool) (PruneReport, error) {
	rep := PruneReport{DryRun: dryRun}
	if err := s.pruneJobs(ctx, now.Add(-policy.Deliveries), &rep); err != nil {
		return rep, pg.Classify(err)
	}
	for _, t := range []managedTable{attemptsTable, quarantineTable} {
		if err := s.pruneByTime(ctx, t, now.Add(-policy.of(t)), &rep); err != nil {
			return rep, pg.Classify(err)
		}
	}
	minRetained, err := s.pruneEvents(ctx, now.Add(-policy.Events), &rep)
	if err != nil {
		return rep, pg.Classify(err)
	}
	if err := s.pruneEventIDs(ctx, now.Add(-policy.Events), minRetained, &rep); err != nil {
		return rep, pg.Classify(err)
	}
	if err := s.pruneIdempotencyKeys(ctx, now.Add(-catalog.IdempotencyWindow), &rep); err != nil {
		return rep, pg.Classify(err)
	}
	return rep, nil
}

// pruneByTime drops t's daily partitions that ended at or before cutoff and
// deletes the catch-all's rows older than it.
func (s *Store) pruneByTime(ctx context.Context, t managedTable, cutoff time.Time, rep *PruneReport) error {
	parts, err := listPartitions(ctx, s.Pool, t)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.catchAll() || p.day.Add(day).After(cutoff) {
			continue
		}
		r := Removal{Table: t.Name, Partition: p.name, Bytes: p.bytes, Whole: true}
		if r.Rows, err = countRows(ctx, s.Pool, p.name); err != nil {
			return err
		}
		if !rep.DryRun {
			if _, err := s.dropPartitions(ctx, nil, p.name); err != nil {
				return err
			}
		}
		rep.Removals = append(rep.Removals, r)
	}
	return s.pruneCatchAll(ctx, t, pgx.StrictNamedArgs{"cutoff": cutoff}, rep)
}

// pruneJobs drops the daily partitions of delivery jobs created at or
// before cutoff whose every job finished at or before it, and deletes the
// finished jobs of the default partition that ended before cutoff.
//
// A partition holding a job that is still pending or in flight, or one that
// finished (or was replayed) after cutoff, stays whole until that job too
// is old: finished jobs, dead letters included, are kept at least the
// deliveries retention after they end (docs/architecture.md). Live jobs are
// found through dispatch's partial indexes; finding a recent end reads the
// partition, which happens only for partitions already past their day.
func (s *Store) pruneJobs(ctx context.Context, cutoff time.Time, rep *PruneReport) error {
	parts, err := listPartitions(ctx, s.Pool, jobsTable)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.catchAll() || p.day.Add(day).After(cutoff) {
			continue
		}
		live := pgx.StrictNamedArgs{"partition": p.name}
		var pinned, recent bool
		if err := s.Pool.QueryRow(ctx, jobsLiveInPartitionSQL, live).Scan(&pinned); err != nil {
			return fmt.Errorf("look for live jobs in %s: %w", p.name, err)
		}
		if !pinned {
			err := s.Pool.QueryRow(ctx, jobsFinishedSinceSQL, pgx.StrictNamedArgs{"partition": p.name, "cutoff": cutoff}).Scan(&recent)
			if err != nil {
				return fmt.Errorf("look for recently finished jobs in %s: %w", p.name, err)
			}
		}
		switch {
		case pinned:
			rep.Kept = append(rep.Kept, Kept{Table: TableDeliveryJobs, Partition: p.name, Reason: "pending or in-flight jobs"})
			continue
		case recent:
			rep.Kept = append(rep.Kept, Kept{Table: TableDeliveryJobs, Partition: p.name, Reason: "jobs finished within retention"})
			continue
		}
		r := Removal{Table: TableDeliveryJobs, Partition: p.name, Bytes: p.bytes, Whole: true}
		if r.Rows, err = countRows(ctx, s.Pool, p.name); err != nil {
			return err
		}
		if !rep.DryRun {
			dropped, err := s.dropPartitions(ctx, func(tx pgx.Tx) error {
				// Checked again where the drop waits for no one: a dead
				// letter replayed since is pending now.
				return refuseIfPinned(ctx, tx, jobsLiveInPartitionSQL, live)
			}, p.name)
			if err != nil {
				return err
			}
			if !dropped {
				continue
			}
		}
		rep.Removals = append(rep.Removals, r)
	}
	return s.pruneCatchAll(ctx, jobsTable, pgx.StrictNamedArgs{"cutoff": cutoff}, rep)
}

// pruneCatchAll deletes the expired rows of t's catch-all partition, which
// its catchAllExpiry statements find with args. Only rows that found no
// daily partition are there (a clock far off, a maintainer that had not
// yet run, what was stored before the partitions existed), so these are
// the only rows retention deletes one by one.
func (s *Store) pruneCatchAll(ctx context.Context, t managedTable, args pgx.StrictNamedArgs, rep *PruneReport) error {
	r := Removal{Table: t.Name, Partition: t.catchAll}
	expiry := catchAllExpiry[t.Name]
	var err error
	if rep.DryRun {
		err = s.Pool.QueryRow(ctx, expiry.count, args).Scan(&r.Rows)
	} else {
		var tag interface{ RowsAffected() int64 }
		tag, err = s.Pool.Exec(ctx, expiry.delete, args)
		if err == nil {
			r.Rows = tag.RowsAffected()
		}
	}
	if err != nil {
		return fmt.Errorf("prune %s: %w", t.catchAll, err)
	}
	if r.Rows > 0 {
		rep.Removals = append(rep.Removals, r)
	}
	return nil
}

// catchAllExpiry are, by table, the statements that count and delete the
// rows of its catch-all partition that retention no longer keeps.
var catchAllExpiry = map[string]struct{ count, delete string }{
	TableDeliveryAttempts: {countExpiredAttemptsDefaultSQL, deleteExpiredAttemptsDefaultSQL},
	TableQuarantine:       {countExpiredQuarantineDefaultSQL, deleteExpiredQuarantineDefaultSQL},
	TableDeliveryJobs:     {countExpiredJobsDefaultSQL, deleteExpiredJobsDefaultSQL},
	TableEventIDs:         {countExpiredEventIDsDefaultSQL, deleteExpiredEventIDsDefaultSQL},
}

// countRows counts the rows of one partition.
func countRows(ctx context.Context, q pg.Querier, table string) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, countPartitionRowsSQL, pgx.StrictNamedArgs{"partition": table}).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows of %s: %w", table, err)
	}
	return n, nil
}

// dropPartitions drops partitions in one short transaction that waits at
// most lockTimeout for the parents' exclusive lock; prepare, when set, runs
// first in that transaction, and returns errPinned when something still
// needs them: then nothing is dropped and dropped is false.
func (s *Store) dropPartitions(ctx context.Context, prepare func(pgx.Tx) error, names ...string) (dropped bool, err error) {
	err = pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, setLockTimeoutSQL, pgx.StrictNamedArgs{"lock_timeout": lockTimeout}); err != nil {
			return err
		}
		if prepare != nil {
			if err := prepare(tx); err != nil {
				return err
			}
		}
		for _, name := range names {
			if _, err := tx.Exec(ctx, `DROP TABLE `+pgx.Identifier{name}.Sanitize()); err != nil {
				return fmt.Errorf("drop partition %s: %w", name, err)
			}
		}
		return nil
	})
	if errors.Is(err, errPinned) {
		return false, nil
	}
	return err == nil, err
}

// pruneEvents drops the inbox's partitions whose newest event is older than
// cutoff, each with its pull entries, and returns the lowest seq the inbox
// keeps (the sequence's next value when it keeps none).
//
// A partition is dropped only once the sequence has moved past it (nothing
// new can land there) and no job in a pinning state refers to one of its
// events: such a straggler keeps its whole partition until the job ends
// (docs/architecture.md). Pull entries have no such hold: a reader behind
// retention loses them, and its cursor records the highest seq it lost so
// that its next read says events_expired.
func (s *Store) pruneEvents(ctx context.Context, cutoff time.Time, rep *PruneReport) (int64, error) {
	parts, err := listPartitions(ctx, s.Pool, eventsTable)
	if err != nil {
		return 0, err
	}
	pull, err := listPartitions(ctx, s.Pool, pullTable)
	if err != nil {
		return 0, err
	}
	pullByDay := make(map[time.Time]partition, len(pull))
	for _, p := range pull {
		pullByDay[p.day] = p
	}
	last, err := pg.LastSeq(ctx, s.Pool)
	if err != nil {
		return 0, fmt.Errorf("read the inbox sequence: %w", err)
	}
	sortBySeq(parts)
	lowestKept := last + 1
	keptAny := false
	for _, p := range parts {
		drop, reason, err := s.eventsPartitionExpired(ctx, p, last, cutoff)
		if err != nil {
			return 0, err
		}
		if !drop {
			if reason != "" {
				rep.Kept = append(rep.Kept, Kept{Table: TableEvents, Partition: p.name, Reason: reason})
			}
			if !keptAny {
				lowestKept, keptAny = max(p.lo, 0), true
			}
			continue
		}
		ev := Removal{Table: TableEvents, Partition: p.name, Bytes: p.bytes, Whole: true}
		if ev.Rows, err = countRows(ctx, s.Pool, p.name); err != nil {
			return 0, err
		}
		names := []string{p.name}
		var pe *Removal
		var pullEntries pgx.StrictNamedArgs // the pull partition's bounds on the parent
		if pp, ok := pullByDay[p.day]; ok {
			pullEntries = pgx.StrictNamedArgs{"lo": pp.lo, "hi": pp.hi}
			pe = &Removal{Table: TablePullEntries, Partition: pp.name, Bytes: pp.bytes, Whole: true}
			if pe.Rows, err = countRows(ctx, s.Pool, pp.name); err != nil {
				return 0, err
			}
			names = append(names, pp.name)
		}
		if !rep.DryRun {
			var expired int64
			dropped, err := s.dropPartitions(ctx, func(tx pgx.Tx) error {
				// Checked again in the transaction that drops: a dead
				// letter replayed since is pending now, still pinning.
				if err := refuseIfPinned(ctx, tx, eventsPinnedSQL, pgx.StrictNamedArgs{"lo": p.lo, "hi": p.hi}); err != nil {
					return err
				}
				if pe == nil {
					return nil
				}
				tag, err := tx.Exec(ctx, expirePullCursorsSQL, pullEntries)
				expired = tag.RowsAffected()
				return err
			}, names...)
			if err != nil {
				return 0, err
			}
			if !dropped {
				continue
			}
			rep.ExpiredCursors += expired
		} else if pe != nil {
			var n int64
			if err := s.Pool.QueryRow(ctx, countExpiringPullCursorsSQL, pullEntries).Scan(&n); err != nil {
				return 0, fmt.Errorf("count pull cursors behind %s: %w", pe.Partition, err)
			}
			rep.ExpiredCursors += n
		}
		rep.Removals = append(rep.Removals, ev)
		if pe != nil {
			rep.Removals = append(rep.Removals, *pe)
		}
	}
	if keptAny {
		var first *int64
		if err := s.Pool.QueryRow(ctx, oldestRetainedSeqSQL, pgx.StrictNamedArgs{"lowest_kept": lowestKept}).Scan(&first); err != nil {
			return 0, fmt.Errorf("find the oldest retained event: %w", err)
		}
		if first != nil {
			return *first, nil
		}
	}
	return last + 1, nil
}

var errPinned = errors.New("partition pinned")

// refuseIfPinned runs check, a query of one bool saying whether something
// still needs a partition, in the transaction that drops it, and returns
// errPinned when it does.
func refuseIfPinned(ctx context.Context, tx pgx.Tx, check string, args ...any) error {
	var pinned bool
	if err := tx.QueryRow(ctx, check, args...).Scan(&pinned); err != nil {
		return err
	}
	if pinned {
		return errPinned
	}
	return nil
}

// eventsPartitionExpired decides one inbox partition; reason is set when it
// is expired but must stay.
func (s *Store) eventsPartitionExpired(ctx context.Context, p partition, last int64, cutoff time.Time) (drop bool, reason string, err error) {
	if last < p.hi {
		return false, "", nil // still filling, or not yet started
	}
	var newest *time.Time
	inPartition := pgx.StrictNamedArgs{"lo": p.lo, "hi": p.hi}
	err = s.Pool.QueryRow(ctx, newestEventBetweenSQL, inPartition).Scan(&newest)
	if err != nil {
		return false, "", fmt.Errorf("read the newest event of %s: %w", p.name, err)
	}
	switch {
	case newest != nil && newest.After(cutoff):
		return false, "", nil
	case newest == nil && !p.catchAll() && p.day.Add(day).After(cutoff):
		return false, "", nil
	}
	var pinned bool
	if err := s.Pool.QueryRow(ctx, eventsPinnedSQL, inPartition).Scan(&pinned); err != nil {
		return false, "", fmt.Errorf("look for jobs that need %s: %w", p.name, err)
	}
	if pinned {
		return false, "events of pending, in-flight or dead jobs", nil
	}
	return true, "", nil
}

// pruneEventIDs drops the daily partitions of event_ids older than cutoff
// whose every event is gone (each day's highest seq, kept by ingest in
// event_id_days over its slots, is below the lowest retained seq), and deletes the same
// rows from the default partition. Until then a copy of any retained event
// is still a duplicate; after, its id is unknown and a copy is a new event.
// The drop runs under the ingest lock, so no batch adds an id to the day
// between the check and the drop.
func (s *Store) pruneEventIDs(ctx context.Context, cutoff time.Time, minRetained int64, rep *PruneReport) error {
	parts, err := listPartitions(ctx, s.Pool, eventIDsTable)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.catchAll() || p.day.Add(day).After(cutoff) {
			continue
		}
		r := Removal{Table: TableEventIDs, Partition: p.name, Bytes: p.bytes, Whole: true}
		if r.Rows, err = countRows(ctx, s.Pool, p.name); err != nil {
			return err
		}
		lo, hi := bounds(eventIDsTable, p.day)
		check := func(q pg.Querier) (bool, error) {
			var gone bool
			err := q.QueryRow(ctx, eventIDsGoneSQL, pgx.StrictNamedArgs{"min_retained": minRetained, "day": p.day, "lo": lo, "hi": hi}).Scan(&gone)
			return gone, err
		}
		gone, err := check(s.Pool)
		if err != nil {
			return fmt.Errorf("check %s: %w", p.name, err)
		}
		if !gone {
			rep.Kept = append(rep.Kept, Kept{Table: TableEventIDs, Partition: p.name, Reason: "ids of retained events"})
			continue
		}
		if !rep.DryRun {
			dropped, err := s.dropPartitions(ctx, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, takeIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": pg.IngestLockKey}); err != nil {
					return err
				}
				gone, err := check(tx)
				if err != nil {
					return err
				}
				if !gone {
					return errPinned
				}
				_, err = tx.Exec(ctx, deleteEventIDDaySQL, pgx.StrictNamedArgs{"day": p.day})
				return err
			}, p.name)
			if err != nil {
				return err
			}
			if !dropped {
				continue
			}
		}
		rep.Removals = append(rep.Removals, r)
	}
	if !rep.DryRun {
		if _, err := s.Pool.Exec(ctx, deleteEventIDDaysBelowSQL, pgx.StrictNamedArgs{"min_retained": minRetained}); err != nil {
			return fmt.Errorf("prune event_id_days: %w", err)
		}
	}
	return s.pruneCatchAll(ctx, eventIDsTable, pgx.StrictNamedArgs{"min_retained": minRetained}, rep)
}

//go:embed sql/try_retention_lock.sql
var tryRetentionLockSQL string

//go:embed sql/release_retention_lock.sql
var releaseRetentionLockSQL string

//go:embed sql/count_partition_rows.sql
var countPartitionRowsSQL string

//go:embed sql/count_expired_attempts_default.sql
var countExpiredAttemptsDefaultSQL string

//go:embed sql/delete_expired_attempts_default.sql
var deleteExpiredAttemptsDefaultSQL string

//go:embed sql/count_expired_quarantine_default.sql
var countExpiredQuarantineDefaultSQL string

//go:embed sql/delete_expired_quarantine_default.sql
var deleteExpiredQuarantineDefaultSQL string

//go:embed sql/count_expired_jobs_default.sql
var countExpiredJobsDefaultSQL string

//go:embed sql/delete_expired_jobs_default.sql
var deleteExpiredJobsDefaultSQL string

//go:embed sql/count_expired_event_ids_default.sql
var countExpiredEventIDsDefaultSQL string

//go:embed sql/delete_expired_event_ids_default.sql
var deleteExpiredEventIDsDefaultSQL string

//go:embed sql/jobs_live_in_partition.sql
var jobsLiveInPartitionSQL string

//go:embed sql/jobs_finished_since.sql
var jobsFinishedSinceSQL string

//go:embed sql/expire_pull_cursors.sql
var expirePullCursorsSQL string

//go:embed sql/count_expiring_pull_cursors.sql
var countExpiringPullCursorsSQL string

//go:embed sql/events_pinned.sql
var eventsPinnedSQL string

//go:embed sql/newest_event_between.sql
var newestEventBetweenSQL string

//go:embed sql/oldest_retained_seq.sql
var oldestRetainedSeqSQL string

//go:embed sql/event_ids_gone.sql
var eventIDsGoneSQL string

//go:embed sql/delete_event_id_day.sql
var deleteEventIDDaySQL string

//go:embed sql/delete_event_id_days_below.sql
var deleteEventIDDaysBelowSQL string

// TableIdempotencyKeys labels the Idempotency-Key rows in prune reports
// and the retention metrics.
const TableIdempotencyKeys = "idempotency_keys"

// pruneIdempotencyKeys deletes the keys older than cutoff, or counts them
// on a dry run. The table holds a day of POSTs, so a plain delete by the
// created_at index is cheap.
func (s *Store) pruneIdempotencyKeys(ctx context.Context, cutoff time.Time, rep *PruneReport) error {
	var n int64
	var err error
	if rep.DryRun {
		err = s.Pool.QueryRow(ctx, countExpiredIdempotencyKeysSQL, pgx.StrictNamedArgs{"cutoff": cutoff}).Scan(&n)
	} else {
		tag, execErr := s.Pool.Exec(ctx, deleteExpiredIdempotencyKeysSQL, pgx.StrictNamedArgs{"cutoff": cutoff})
		n, err = tag.RowsAffected(), execErr
	}
	if err != nil {
		return fmt.Errorf("prune idempotency keys: %w", err)
	}
	if n > 0 {
		rep.Removals = append(rep.Removals, Removal{Table: TableIdempotencyKeys, Partition: "idempotency_keys", Rows: n})
	}
	return nil
}

//go:embed sql/count_expired_idempotency_keys.sql
var countExpiredIdempotencyKeysSQL string

//go:embed sql/delete_expired_idempotency_keys.sql
var deleteExpiredIdempotencyKeysSQL string
