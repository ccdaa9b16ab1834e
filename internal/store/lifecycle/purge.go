package lifecycle

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/backoff"
	"github.com/hubctl/hubctl/internal/store/pg"
)

// PurgeCount is how many rows of one table a tenant purge removed.
type PurgeCount struct {
	Table string
	Rows  int64
}

// PurgeChannel is the notification channel a tenant purge signals when it
// has fenced the tenant (PurgeFence's payload): every dispatcher LISTENs,
// cuts the tenant's attempts in progress short and drops its claimed jobs,
// so the purge's wait for them ends in moments rather than at their
// leases' end.
const PurgeChannel = "hubctl_purge"

// PurgeFence is what a purge's notification says: the jobs of Tenant whose
// events have a seq up to Seq are being purged. Every job of the purged
// tenant is one of them; a tenant created again under the same id later
// only gets higher seqs.
type PurgeFence struct {
	Tenant string
	Seq    int64
}

// Covers reports whether the fence covers a job of tenant for the event
// seq.
func (f PurgeFence) Covers(tenant string, seq int64) bool {
	return tenant == f.Tenant && seq <= f.Seq
}

func (f PurgeFence) payload() string { return strconv.FormatInt(f.Seq, 10) + " " + f.Tenant }

// ParsePurgeFence reads a PurgeChannel payload.
func ParsePurgeFence(payload string) (PurgeFence, error) {
	seq, tenant, ok := strings.Cut(payload, " ")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || tenant == "" {
		return PurgeFence{}, fmt.Errorf("malformed purge notification %q", payload)
	}
	return PurgeFence{Tenant: tenant, Seq: n}, nil
}

// ListenPurges LISTENs on PurgeChannel.
func (s *Store) ListenPurges(ctx context.Context) (*pg.Listener, error) {
	return pg.Listen(ctx, s.Pool, PurgeChannel, "tenant purges")
}

// purgeSteps delete one tenant's rows, @tenant_id its id, in an order that leaves
// no row pointing at a removed one. Before them the tenant's jobs are
// locked (lockPurgedJobs): a recording that updated one of them has
// committed its attempt, which the first step then sees, and one that
// comes later finds its job gone and writes nothing. Quarantined records
// carry no tenant column: a record is the tenant's when one of its headers
// is the tenantid attribute (either prefix, any case) with the tenant's id.
var purgeSteps = []struct{ table, sql string }{
	{"delivery_attempts", purgeDeliveryAttemptsSQL},
	{"delivery_jobs", purgeDeliveryJobsSQL},
	{"pull_entries", purgePullEntriesSQL},
	{"pull_cursors", purgePullCursorsSQL},
	{"events", purgeEventsSQL},
	{"event_ids", purgeEventIdsSQL},
	{"quarantine", purgeQuarantineSQL},
	{"subscription_rates", purgeSubscriptionRatesSQL},
	{"subscriptions", purgeSubscriptionsSQL},
	{"tenant_api_keys", purgeTenantApiKeysSQL},
	{"breaker_states", purgeBreakerStatesSQL},
	{"dead_letter_reports", purgeDeadLetterReportsSQL},
	{"operational_outbox", purgeOperationalOutboxSQL},
	{"idempotency_keys", purgeIdempotencyKeysSQL},
	{"portal_sessions", purgePortalSessionsSQL},
	{"portal_links", purgePortalLinksSQL},
	{"tenants", purgeTenantsSQL},
}

//go:embed sql/purge_delivery_attempts.sql
var purgeDeliveryAttemptsSQL string

//go:embed sql/purge_delivery_jobs.sql
var purgeDeliveryJobsSQL string

//go:embed sql/purge_pull_entries.sql
var purgePullEntriesSQL string

//go:embed sql/purge_pull_cursors.sql
var purgePullCursorsSQL string

//go:embed sql/purge_events.sql
var purgeEventsSQL string

//go:embed sql/purge_event_ids.sql
var purgeEventIdsSQL string

//go:embed sql/purge_quarantine.sql
var purgeQuarantineSQL string

//go:embed sql/purge_subscription_rates.sql
var purgeSubscriptionRatesSQL string

//go:embed sql/purge_subscriptions.sql
var purgeSubscriptionsSQL string

//go:embed sql/purge_tenant_api_keys.sql
var purgeTenantApiKeysSQL string

//go:embed sql/purge_breaker_states.sql
var purgeBreakerStatesSQL string

//go:embed sql/purge_operational_outbox.sql
var purgeOperationalOutboxSQL string

//go:embed sql/purge_dead_letter_reports.sql
var purgeDeadLetterReportsSQL string

//go:embed sql/purge_idempotency_keys.sql
var purgeIdempotencyKeysSQL string

//go:embed sql/purge_portal_sessions.sql
var purgePortalSessionsSQL string

//go:embed sql/purge_portal_links.sql
var purgePortalLinksSQL string

//go:embed sql/purge_tenants.sql
var purgeTenantsSQL string

// lockPurgedJobs locks every job of the tenant, live or finished, without
// sending them over.
//
//go:embed sql/lock_purged_jobs.sql
var lockPurgedJobs string

// purgeWait spaces the looks at a purged tenant's attempts in flight: the
// dispatchers' answer to the fence takes milliseconds, an attempt that
// runs to its end up to its timeout.
var purgeWait = backoff.Policy{Min: 20 * time.Millisecond, Max: time.Second}

// errAttemptsInFlight is a purge's look finding attempts still in flight.
var errAttemptsInFlight = errors.New("attempts in flight")

// PurgeTenant removes every stored row of one tenant, the tenant itself
// last, and counts what went per table. Nothing of another tenant is
// touched. A tenant that does not exist is an pg.ErrNotFound. now is the
// clock leases are compared with, the dispatchers' (nil: time.Now).
//
// Once it returns, nothing of the tenant is delivered or stored. It goes
// in two steps (docs/architecture.md, Purge):
//
//  1. The fence, committed on its own: the tenant is made inactive (ingest
//     discards its events), its pending jobs are canceled (no claim takes
//     them), and PurgeChannel tells every dispatcher.
//  2. The removal, in ONE transaction holding the ingest lock exclusively
//     (no batch stores or hands over the tenant's jobs meanwhile): once no
//     job of the tenant is in flight under a live lease, whatever process
//     holds it, every row goes. While one is, the transaction is rolled
//     back and tried again after a wait, until ctx ends.
//
// A purge that ends early (ctx) leaves the fence: the tenant inactive and
// its pending jobs canceled. Running it again finishes it.
func (s *Store) PurgeTenant(ctx context.Context, id string, now func() time.Time) ([]PurgeCount, error) {
	if now == nil {
		now = time.Now
	}
	if err := s.fencePurge(ctx, id, now()); err != nil {
		return nil, err
	}
	var counts []PurgeCount
	err := purgeWait.Retry(ctx, func() error {
		var err error
		counts, err = s.removeTenant(ctx, id, now())
		return err
	}, func(err error, _ int, _ time.Duration) bool {
		return !errors.Is(err, errAttemptsInFlight)
	})
	if errors.Is(err, pg.ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("purge tenant %q: %w", id, err))
	}
	return counts, nil
}

// fencePurge is PurgeTenant's first step.
func (s *Store) fencePurge(ctx context.Context, id string, now time.Time) error {
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := lockTenant(ctx, tx, id); err != nil {
			return err
		}
		// Exclusive: no batch is in progress, so every job of the tenant
		// there is now has an event seq up to the sequence's last value.
		if _, err := tx.Exec(ctx, takeIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": pg.IngestLockKey}); err != nil {
			return err
		}
		var fence PurgeFence
		fence.Tenant = id
		if err := tx.QueryRow(ctx, lastDrawnSeqSQL).Scan(&fence.Seq); err != nil {
			return err
		}
		pipe := &pgx.Batch{}
		pipe.Queue(fenceTenantSQL, pgx.StrictNamedArgs{"id": id, "now": now})
		pipe.Queue(fenceTenantJobsSQL, pgx.StrictNamedArgs{"id": id, "now": now})
		pipe.Queue(notifyPurgeSQL, pgx.StrictNamedArgs{"purge_channel": PurgeChannel, "payload": fence.payload()})
		return tx.SendBatch(ctx, pipe).Close()
	})
	if errors.Is(err, pg.ErrNotFound) {
		return err
	}
	if err != nil {
		return pg.Classify(fmt.Errorf("fence tenant %q for its purge: %w", id, err))
	}
	return nil
}

// removeTenant is PurgeTenant's second step; errAttemptsInFlight while a
// job of the tenant is in flight under a live lease.
func (s *Store) removeTenant(ctx context.Context, id string, now time.Time) ([]PurgeCount, error) {
	var counts []PurgeCount
	err := pg.InTx(ctx, s.Pool, func(tx pgx.Tx) error {
		counts = counts[:0]
		if err := lockTenant(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, takeIngestLockSQL, pgx.StrictNamedArgs{"ingest_lock_key": pg.IngestLockKey}); err != nil {
			return err
		}
		// Whatever could put a job in flight now waits for this
		// transaction: a claim needs a pending job, and every pending job
		// (a batch before the fence reached ingest, a replay) is canceled
		// under this transaction's lock; a recovery of a subscription
		// locks its row; ingest waits for the lock above.
		if _, err := tx.Exec(ctx, lockTenantSubscriptionsSQL, pgx.StrictNamedArgs{"id": id}); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, lockPurgedJobs, pgx.StrictNamedArgs{"id": id}); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, cancelTenantJobsSQL, pgx.StrictNamedArgs{"id": id, "now": now}); err != nil {
			return err
		}
		var inFlight int64
		if err := tx.QueryRow(ctx, countTenantAttemptsInFlightSQL,
			pgx.StrictNamedArgs{"id": id, "now": now}).Scan(&inFlight); err != nil {
			return err
		}
		if inFlight > 0 {
			return fmt.Errorf("%w: %d of tenant %q", errAttemptsInFlight, inFlight, id)
		}
		for _, step := range purgeSteps {
			tag, err := tx.Exec(ctx, step.sql, pgx.StrictNamedArgs{"tenant_id": id})
			if err != nil {
				return fmt.Errorf("purge %s: %w", step.table, err)
			}
			counts = append(counts, PurgeCount{Table: step.table, Rows: tag.RowsAffected()})
		}
		return nil
	})
	return counts, err
}

// lockTenant locks the tenant's row; pg.ErrNotFound when there is none.
func lockTenant(ctx context.Context, tx pgx.Tx, id string) error {
	var exists bool
	if err := tx.QueryRow(ctx, lockTenantSQL, pgx.StrictNamedArgs{"id": id}).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return pg.TenantNotFound(id)
	}
	return nil
}

// CancelPurged settles jobs of a tenant being purged that owner claimed
// and will not attempt, or whose attempt the purge cut short: canceled,
// their leases ended, so the purge's wait for them is over. Only jobs
// still in flight under owner's lease move; it reports how many did.
func (s *Store) CancelPurged(ctx context.Context, owner string, jobIDs []uuid.UUID) (int64, error) {
	if len(jobIDs) == 0 {
		return 0, nil
	}
	tag, err := s.Pool.Exec(ctx, cancelPurgedSQL, pgx.StrictNamedArgs{"job_ids": jobIDs, "owner": owner})
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("cancel %d jobs of a purged tenant: %w", len(jobIDs), err))
	}
	return tag.RowsAffected(), nil
}

//go:embed sql/take_ingest_lock.sql
var takeIngestLockSQL string

//go:embed sql/last_drawn_seq.sql
var lastDrawnSeqSQL string

//go:embed sql/fence_tenant.sql
var fenceTenantSQL string

//go:embed sql/fence_tenant_jobs.sql
var fenceTenantJobsSQL string

//go:embed sql/notify_purge.sql
var notifyPurgeSQL string

//go:embed sql/lock_tenant_subscriptions.sql
var lockTenantSubscriptionsSQL string

//go:embed sql/cancel_tenant_jobs.sql
var cancelTenantJobsSQL string

//go:embed sql/count_tenant_attempts_in_flight.sql
var countTenantAttemptsInFlightSQL string

//go:embed sql/cancel_purged.sql
var cancelPurgedSQL string

//go:embed sql/lock_tenant.sql
var lockTenantSQL string
