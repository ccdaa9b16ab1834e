package queue

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// Parking (docs/architecture.md, Delivery controls meet in the claim): a
// claim that finds a keyed job queued behind an earlier live job of its
// key parks it, pending with next_attempt_at at infinity, which takes it
// out of every later claim's walk of delivery_jobs_due. Only the key's
// head (its live job of lowest seq) is ever needed again, so whatever
// moves a keyed job out of in_flight, or settles one without an attempt,
// releases the head of its key in the same transaction, after the
// transition: releaseHeads. ReleaseStrandedKeys is the sweep for a release
// that was missed anyway.
//
// Why a release is never lost to a race with a claim that parks: the
// claim parks a job only while it holds a FOR SHARE lock on the job that
// blocks it, taken after reading that job's newest version, so the
// blocker's own transition either ended before the claim looked (and the
// claim does not park) or waits for the claim to commit, and its release,
// a later statement, sees the parked job.

// releaseHeadsSQL makes the head of each key, named or of the jobs @ids,
// due when it is parked:
// due since it was created, which puts it back where it was in its
// tenant's queue (claims take the oldest due first) and keeps it due
// whichever instance's clock a claim reads. It waits for row locks rather
// than skipping them: whoever holds a parked job's lock is about to
// release or settle it, and the re-check on the row's newest version
// decides.
//
//go:embed sql/release_heads.sql
var releaseHeadsSQL string

// orderingKeys collects the keys whose heads a transition may have moved.
type orderingKeys struct {
	subscriptions []uuid.UUID
	keys          []string
}

func (k *orderingKeys) add(subscription uuid.UUID, key *string) {
	if key != nil {
		k.subscriptions = append(k.subscriptions, subscription)
		k.keys = append(k.keys, *key)
	}
}

func (k *orderingKeys) empty() bool { return len(k.keys) == 0 }

func (k *orderingKeys) args(at time.Time) pgx.StrictNamedArgs {
	return pgx.StrictNamedArgs{"subscriptions": k.subscriptions, "keys": k.keys, "ids": []uuid.UUID(nil), "at": at}
}

// releaseHeads runs releaseHeadsSQL for keys in tx, after the statements
// that moved their jobs.
func releaseHeads(ctx context.Context, tx pgx.Tx, keys orderingKeys, at time.Time) error {
	if keys.empty() {
		return nil
	}
	_, err := tx.Exec(ctx, releaseHeadsSQL, keys.args(at))
	return err
}

// releaseStranded is the sweep: one loose index scan of the parked jobs
// (delivery_jobs_parked), taking each key's lowest parked job, which is
// released when no live job of its key is ahead of it and none is in
// flight. Every release a transition should have made lands here.
//
//go:embed sql/release_stranded.sql
var releaseStranded string

// ReleaseStrandedKeys makes due, at now, the head of every ordering key
// whose live jobs are all parked: a release that a transition missed
// (docs/architecture.md, Delivery controls meet in the claim). Dispatch
// runs it with lease recovery, so a missed release delays a key by at most
// the reap interval and never strands it. It returns how many heads it
// released; anything but 0 means a release was missed.
func (s *Store) ReleaseStrandedKeys(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.Pool.Exec(ctx, releaseStranded, pgx.StrictNamedArgs{"now": now})
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("release stranded ordering keys: %w", err))
	}
	return tag.RowsAffected(), nil
}
