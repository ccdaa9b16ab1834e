package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Shed hands a claimed job back without an attempt, due again at retryAt:
// its destination's breaker is open (docs/concepts.md, Circuit breaker). attempts is unchanged and
// no attempt is recorded. reason (hubapi.HeldBreakerOpen) is what a read of
// the delivery shows until its next claim. It reports false when the job
// was no longer this owner's to hand back.
func (s *Store) Shed(ctx context.Context, jobID uuid.UUID, owner string, retryAt time.Time, reason string) (bool, error) {
	n, err := s.handBack(ctx, `
UPDATE delivery_jobs SET state = 'pending', next_attempt_at = @retry_at, lease_owner = NULL, lease_until = NULL,
    shed_reason = @reason, shed_at = now(), updated_at = now()
WHERE id = @id AND state = 'in_flight' AND lease_owner = @owner`,
		pgx.StrictNamedArgs{"id": jobID, "owner": owner, "retry_at": retryAt, "reason": reason}, []uuid.UUID{jobID})
	if err != nil {
		return false, classify(fmt.Errorf("shed job %s: %w", jobID, err))
	}
	return n == 1, nil
}

// handBack runs update, which moves in-flight jobs among ids back to
// pending, and releases the heads of their ordering keys after it, in one
// round trip and one transaction: a job that goes back to pending holds
// its key again, but a replayed dead letter of lower seq, parked while the
// job was in flight, is now the key's head.
func (s *Store) handBack(ctx context.Context, update string, args pgx.StrictNamedArgs, ids []uuid.UUID) (n int64, err error) {
	pipe := &pgx.Batch{}
	pipe.Queue(update, args)
	pipe.Queue(releaseHeadsOfJobsSQL, pgx.StrictNamedArgs{"ids": ids, "at": time.Now()})
	br := s.Pool.SendBatch(ctx, pipe)
	defer func() {
		if closeErr := br.Close(); err == nil {
			err = closeErr
		}
	}()
	tag, err := br.Exec()
	if err != nil {
		return 0, err
	}
	if _, err := br.Exec(); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// Release hands claimed jobs back untouched and due as they were: pending,
// no attempt spent, no recovery counted. It is for jobs this owner claimed
// but will not attempt (shutdown, or a lease too short for the attempt),
// and reports how many were still this owner's to hand back.
func (s *Store) Release(ctx context.Context, owner string, jobIDs []uuid.UUID) (int64, error) {
	if len(jobIDs) == 0 {
		return 0, nil
	}
	n, err := s.handBack(ctx, `
UPDATE delivery_jobs SET state = 'pending', lease_owner = NULL, lease_until = NULL, updated_at = now()
WHERE id = ANY(@ids) AND state = 'in_flight' AND lease_owner = @owner`,
		pgx.StrictNamedArgs{"ids": jobIDs, "owner": owner}, jobIDs)
	if err != nil {
		return 0, classify(fmt.Errorf("release %d claimed jobs: %w", len(jobIDs), err))
	}
	return n, nil
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
// poisonThreshold times becomes dead with reason poison instead
// (docs/concepts.md, Dead letters and poison: recovered five times by
// default, then dead-lettered), so one job
// that kills its worker cannot hold workers forever. Rows a completing
// worker has locked are left for the next pass.
func (s *Store) RecoverExpiredLeases(ctx context.Context, now time.Time, poisonThreshold int) (Recovered, error) {
	poisonThreshold = max(poisonThreshold, 1)
	var total Recovered
	for {
		var (
			n    int
			step Recovered
		)
		err := s.InTx(ctx, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `
UPDATE delivery_jobs j SET
    recoveries = CASE WHEN j.recoveries >= @poison_threshold THEN j.recoveries ELSE j.recoveries + 1 END,
    state = CASE WHEN j.recoveries >= @poison_threshold THEN 'dead' ELSE 'pending' END,
    dead_reason = CASE WHEN j.recoveries >= @poison_threshold THEN 'poison' END,
    dead_at = CASE WHEN j.recoveries >= @poison_threshold THEN @now::timestamptz END,
    last_error = CASE WHEN j.recoveries >= @poison_threshold
                      THEN 'its lease expired ' || (j.recoveries + 1) || ' times without a recorded attempt'
                      ELSE j.last_error END,
    next_attempt_at = @now, lease_owner = NULL, lease_until = NULL, updated_at = @now
WHERE j.id IN (
    SELECT id FROM delivery_jobs
    WHERE state = 'in_flight' AND lease_until < @now
    ORDER BY lease_until
    LIMIT @batch
    FOR UPDATE SKIP LOCKED)
RETURNING j.state, j.subscription_id, j.ordering_key`, pgx.StrictNamedArgs{"now": now, "poison_threshold": poisonThreshold, "batch": recoverBatch})
			if err != nil {
				return err
			}
			var (
				keys  orderingKeys
				state string
				sub   uuid.UUID
				key   *string
			)
			n, step = 0, Recovered{}
			_, err = pgx.ForEachRow(rows, []any{&state, &sub, &key}, func() error {
				n++
				keys.add(sub, key)
				if state == JobDead {
					step.Poisoned++
				} else {
					step.Retried++
				}
				return nil
			})
			if err != nil {
				return err
			}
			// A job recovered to pending is its key's head again; one
			// dead-lettered as poison lets the next go.
			return releaseHeads(ctx, tx, keys, now)
		})
		if err != nil {
			return total, classify(fmt.Errorf("recover expired leases: %w", err))
		}
		total.Retried += step.Retried
		total.Poisoned += step.Poisoned
		if n < recoverBatch {
			return total, nil
		}
	}
}
