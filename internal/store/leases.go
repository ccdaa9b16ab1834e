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
	tag, err := s.Pool.Exec(ctx, `
UPDATE delivery_jobs SET state = 'pending', next_attempt_at = $3, lease_owner = NULL, lease_until = NULL,
    shed_reason = $4, shed_at = now(), updated_at = now()
WHERE id = $1 AND state = 'in_flight' AND lease_owner = $2`, jobID, owner, retryAt, reason)
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
// poisonThreshold times becomes dead with reason poison instead
// (docs/concepts.md, Dead letters and poison: recovered five times by
// default, then dead-lettered), so one job
// that kills its worker cannot hold workers forever. Rows a completing
// worker has locked are left for the next pass.
func (s *Store) RecoverExpiredLeases(ctx context.Context, now time.Time, poisonThreshold int) (Recovered, error) {
	poisonThreshold = max(poisonThreshold, 1)
	var total Recovered
	for {
		rows, err := s.Pool.Query(ctx, `
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
RETURNING j.state`, pgx.StrictNamedArgs{"now": now, "poison_threshold": poisonThreshold, "batch": recoverBatch})
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
