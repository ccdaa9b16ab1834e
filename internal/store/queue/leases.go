package queue

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// Shed hands a claimed job back without an attempt, due again at retryAt:
// its destination's breaker is open (docs/concepts.md, Circuit breaker). attempts is unchanged and
// no attempt is recorded. reason (hubapi.HeldBreakerOpen) is what a read of
// the delivery shows until its next claim. It reports false when the job
// was no longer this owner's to hand back.
func (s *Store) Shed(ctx context.Context, jobID uuid.UUID, owner string, retryAt time.Time, reason string) (bool, error) {
	n, err := s.handBack(ctx, shedSQL,
		pgx.StrictNamedArgs{"id": jobID, "owner": owner, "retry_at": retryAt, "reason": reason}, []uuid.UUID{jobID})
	if err != nil {
		return false, pg.Classify(fmt.Errorf("shed job %s: %w", jobID, err))
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
	pg.OnExec(pipe.Queue(update, args), "hand the jobs back", func(tag pgconn.CommandTag) error {
		n = tag.RowsAffected()
		return nil
	})
	// The unkeyed jobs among ids have no head to release.
	release := pgx.StrictNamedArgs{"subscriptions": []uuid.UUID(nil), "keys": []string(nil), "ids": ids, "at": time.Now()}
	pg.OnExec(pipe.Queue(releaseHeadsSQL, release), "release the keys' heads", nil)
	if err := s.Pool.SendBatch(ctx, pipe).Close(); err != nil {
		return 0, err
	}
	return n, nil
}

// Release hands claimed jobs back untouched and due as they were: pending,
// no attempt spent, no recovery counted. It is for jobs this owner claimed
// but will not attempt (shutdown, or a lease too short for the attempt),
// and reports how many were still this owner's to hand back.
func (s *Store) Release(ctx context.Context, owner string, jobIDs []uuid.UUID) (int64, error) {
	if len(jobIDs) == 0 {
		return 0, nil
	}
	n, err := s.handBack(ctx, releaseSQL,
		pgx.StrictNamedArgs{"ids": jobIDs, "owner": owner}, jobIDs)
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("release %d claimed jobs: %w", len(jobIDs), err))
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
	return s.RecoverExpiredLeasesReported(ctx, now, poisonThreshold, nil)
}

// Poisoned is a job lease recovery dead-lettered as poison.
type Poisoned struct {
	SubscriptionID uuid.UUID
	TenantID       string
	EventSeq       int64
}

// PoisonReport writes, in the transaction of a lease recovery, how its
// poisoned jobs are reported (operational events,
// docs/operational-events.md); its error rolls the recovery back. A
// recovery that reports takes the ingest lock shared first
// (ShareIngestLock).
type PoisonReport func(ctx context.Context, tx pgx.Tx, poisoned []Poisoned, at time.Time) error

// RecoverExpiredLeasesReported is RecoverExpiredLeases with the report
// of its poisoned jobs, nil for none.
func (s *Store) RecoverExpiredLeasesReported(ctx context.Context, now time.Time, poisonThreshold int, report PoisonReport) (Recovered, error) {
	poisonThreshold = max(poisonThreshold, 1)
	var total Recovered
	for {
		var (
			n    int
			step Recovered
		)
		err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
			if report != nil {
				if err := pg.ShareIngestLock(ctx, tx); err != nil {
					return err
				}
			}
			rows, err := tx.Query(ctx, recoverExpiredLeasesSQL, pgx.StrictNamedArgs{"now": now, "poison_threshold": poisonThreshold, "batch": recoverBatch})
			if err != nil {
				return err
			}
			var (
				keys     orderingKeys
				state    string
				sub      uuid.UUID
				key      *string
				tenant   string
				seq      int64
				poisoned []Poisoned
			)
			n, step = 0, Recovered{}
			_, err = pgx.ForEachRow(rows, []any{&state, &sub, &key, &tenant, &seq}, func() error {
				n++
				keys.add(sub, key)
				if state == pg.JobDead {
					step.Poisoned++
					poisoned = append(poisoned, Poisoned{SubscriptionID: sub, TenantID: tenant, EventSeq: seq})
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
			if err := releaseHeads(ctx, tx, keys, now); err != nil || report == nil || len(poisoned) == 0 {
				return err
			}
			return report(ctx, tx, poisoned, now)
		})
		if err != nil {
			return total, pg.Classify(fmt.Errorf("recover expired leases: %w", err))
		}
		total.Retried += step.Retried
		total.Poisoned += step.Poisoned
		if n < recoverBatch {
			return total, nil
		}
	}
}

//go:embed sql/shed.sql
var shedSQL string

//go:embed sql/release.sql
var releaseSQL string

//go:embed sql/recover_expired_leases.sql
var recoverExpiredLeasesSQL string
