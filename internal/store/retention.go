package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, retentionLockKey).Scan(&got); err != nil {
		return pg.Classify(fmt.Errorf("take the retention lock: %w", err))
	}
	if !got {
		return ErrRetentionBusy
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, retentionLockKey); err != nil {
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
	if err := s.pruneIdempotencyKeys(ctx, now.Add(-IdempotencyWindow), &rep); err != nil {
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
		if r.Rows, err = countRows(ctx, s.Pool, p.name, ""); err != nil {
			return err
		}
		if !rep.DryRun {
			if _, err := s.dropPartitions(ctx, nil, p.name); err != nil {
				return err
			}
		}
		rep.Removals = append(rep.Removals, r)
	}
	where := fmt.Sprintf("%s < '%s'", t.key, cutoff.UTC().Format(time.RFC3339Nano))
	return s.pruneCatchAll(ctx, t, where, rep)
}

// liveJobStates are the states of a job that is not finished.
const liveJobStates = `state IN ('pending', 'in_flight')`

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
		ident := pgx.Identifier{p.name}.Sanitize()
		live := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE state = 'pending') OR EXISTS (SELECT 1 FROM %s WHERE state = 'in_flight')`, ident, ident)
		var pinned, recent bool
		if err := s.Pool.QueryRow(ctx, live).Scan(&pinned); err != nil {
			return fmt.Errorf("look for live jobs in %s: %w", p.name, err)
		}
		if !pinned {
			if err := s.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE updated_at > $1)`, ident), cutoff).Scan(&recent); err != nil {
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
		if r.Rows, err = countRows(ctx, s.Pool, p.name, ""); err != nil {
			return err
		}
		if !rep.DryRun {
			dropped, err := s.dropPartitions(ctx, func(tx pgx.Tx) error {
				// Checked again where the drop waits for no one: a dead
				// letter replayed since is pending now.
				return refuseIfPinned(ctx, tx, live)
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
	where := fmt.Sprintf("NOT %s AND updated_at < '%s'", liveJobStates, cutoff.UTC().Format(time.RFC3339Nano))
	return s.pruneCatchAll(ctx, jobsTable, where, rep)
}

// pruneCatchAll deletes the rows of t's catch-all partition that match
// where. Only rows that found no daily partition are there (a clock far
// off, a maintainer that had not yet run, what was stored before the
// partitions existed), so these are the only rows retention deletes one
// by one.
func (s *Store) pruneCatchAll(ctx context.Context, t managedTable, where string, rep *PruneReport) error {
	r := Removal{Table: t.Name, Partition: t.catchAll}
	var err error
	if rep.DryRun {
		r.Rows, err = countRows(ctx, s.Pool, t.catchAll, where)
	} else {
		var tag interface{ RowsAffected() int64 }
		tag, err = s.Pool.Exec(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s`, t.catchAll, where))
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

func countRows(ctx context.Context, q querier, table, where string) (int64, error) {
	sql := `SELECT count(*) FROM ` + pgx.Identifier{table}.Sanitize()
	if where != "" {
		sql += ` WHERE ` + where
	}
	var n int64
	if err := q.QueryRow(ctx, sql).Scan(&n); err != nil {
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
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+lockTimeout+`'`); err != nil {
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
	last, err := lastSeq(ctx, s.Pool)
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
		if ev.Rows, err = countRows(ctx, s.Pool, p.name, ""); err != nil {
			return 0, err
		}
		names := []string{p.name}
		var pe *Removal
		if pp, ok := pullByDay[p.day]; ok {
			pe = &Removal{Table: TablePullEntries, Partition: pp.name, Bytes: pp.bytes, Whole: true}
			if pe.Rows, err = countRows(ctx, s.Pool, pp.name, ""); err != nil {
				return 0, err
			}
			names = append(names, pp.name)
		}
		if !rep.DryRun {
			var expired int64
			dropped, err := s.dropPartitions(ctx, func(tx pgx.Tx) error {
				// Checked again in the transaction that drops: a dead
				// letter replayed since is pending now, still pinning.
				if err := refuseIfPinned(ctx, tx, pinnedSQL, p.lo, p.hi); err != nil {
					return err
				}
				if pe == nil {
					return nil
				}
				tag, err := tx.Exec(ctx, fmt.Sprintf(`
UPDATE pull_cursors c SET expired_seq = greatest(c.expired_seq, m.last)
FROM (SELECT subscription_id, max(event_seq) AS last FROM %s GROUP BY subscription_id) m
WHERE c.subscription_id = m.subscription_id AND c.cursor_seq < m.last`, pgx.Identifier{pe.Partition}.Sanitize()))
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
			n, err := countRows(ctx, s.Pool, "pull_cursors", fmt.Sprintf(
				`cursor_seq < (SELECT max(event_seq) FROM %s e WHERE e.subscription_id = pull_cursors.subscription_id)`,
				pgx.Identifier{pe.Partition}.Sanitize()))
			if err != nil {
				return 0, err
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
		if err := s.Pool.QueryRow(ctx, `SELECT min(seq) FROM events WHERE seq >= $1`, lowestKept).Scan(&first); err != nil {
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

// pinnedSQL says whether a job whose event must stay refers to an event
// of the seq range [$1, $2): a job that will still be attempted, or a dead
// letter, which can be replayed for as long as deliveries are kept. One
// probe per state, each through that state's partial index (few rows:
// only the jobs not yet finished and the dead letters), so the check never
// reads the finished history.
const pinnedSQL = `SELECT
    EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'pending' AND event_seq >= $1 AND event_seq < $2)
 OR EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'in_flight' AND event_seq >= $1 AND event_seq < $2)
 OR EXISTS (SELECT 1 FROM delivery_jobs WHERE state = 'dead' AND event_seq >= $1 AND event_seq < $2)`

// eventsPartitionExpired decides one inbox partition; reason is set when it
// is expired but must stay.
func (s *Store) eventsPartitionExpired(ctx context.Context, p partition, last int64, cutoff time.Time) (drop bool, reason string, err error) {
	if last < p.hi {
		return false, "", nil // still filling, or not yet started
	}
	var newest *time.Time
	err = s.Pool.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT received_at FROM %s ORDER BY seq DESC LIMIT 1)`,
		pgx.Identifier{p.name}.Sanitize())).Scan(&newest)
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
	if err := s.Pool.QueryRow(ctx, pinnedSQL, p.lo, p.hi).Scan(&pinned); err != nil {
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
		if r.Rows, err = countRows(ctx, s.Pool, p.name, ""); err != nil {
			return err
		}
		check := func(q querier) (bool, error) {
			var gone bool
			err := q.QueryRow(ctx, fmt.Sprintf(`
SELECT coalesce((SELECT max(last_seq) < $1 FROM event_id_days WHERE day = $2), NOT EXISTS (SELECT 1 FROM %s))`,
				pgx.Identifier{p.name}.Sanitize()), minRetained, p.day).Scan(&gone)
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
				if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, ingestLockKey); err != nil {
					return err
				}
				gone, err := check(tx)
				if err != nil {
					return err
				}
				if !gone {
					return errPinned
				}
				_, err = tx.Exec(ctx, `DELETE FROM event_id_days WHERE day = $1`, p.day)
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
		if _, err := s.Pool.Exec(ctx, `DELETE FROM event_id_days WHERE last_seq < $1`, minRetained); err != nil {
			return fmt.Errorf("prune event_id_days: %w", err)
		}
	}
	return s.pruneCatchAll(ctx, eventIDsTable, fmt.Sprintf("seq < %d", minRetained), rep)
}
