package queue

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// ClaimRingSize bounds how many tenants with pending jobs one claim visits
// looking for due work. Each visit costs one index probe; the claim resumes
// where the last one stopped, so tenants beyond the ring are reached by the
// next claims.
const ClaimRingSize = 1024

// ClaimRequest asks for up to Limit due jobs.
type ClaimRequest struct {
	Owner string // lease_owner of the claimed jobs: this process
	Limit int
	Now   time.Time
	// After is the tenant the previous claim stopped at (ClaimResult.Resume);
	// the claim starts with the tenant after it, wrapping around. "" starts
	// at the first tenant.
	After string
	// LeaseMargin is added to each subscription's attempt_timeout to form
	// the lease: time for the attempt to be recorded after it ends.
	LeaseMargin time.Duration
	// SkipTenants are passed over as if they had no due job: the claimer
	// holds enough of their jobs already, held back by its in-flight caps.
	SkipTenants []string
}

// ClaimResult is what one claim took.
type ClaimResult struct {
	// Jobs are now in_flight, leased to the owner, oldest first.
	Jobs []ClaimedJob
	// Resume is where the next claim should start (its ClaimRequest.After).
	Resume string
	// Jobs the claim settled without an attempt: of deleted subscriptions
	// (canceled), of disabled ones (dead, subscription_disabled) and jobs
	// whose event is missing from the inbox (dead, poison).
	Canceled, Disabled, Orphaned int
	// RateLimited counts jobs the claim left pending, held for the later
	// slot their subscription's rate_limit gave them, without an attempt.
	RateLimited int
	// Parked counts keyed jobs the claim found queued behind an earlier
	// job of their key and took out of the walk of later claims (pending,
	// next_attempt_at at infinity) until that job ends. A claim that parked
	// some has work behind them: the next claim should come at once.
	Parked int
}

// ClaimedJob is one claimed job with its event. Its subscription is named,
// not returned: claims are frequent and subscriptions rarely change, so
// dispatch keeps the rows it has read (SubscriptionsByID) and reads one
// again only when the claim saw a newer version.
type ClaimedJob struct {
	ID         uuid.UUID
	Attempts   int // attempts made before this claim
	Recoveries int
	LeaseUntil time.Time
	TenantID   string
	// SubscriptionID and SubscriptionUpdatedAt name the version of the
	// subscription the claim found enabled.
	SubscriptionID        uuid.UUID
	SubscriptionUpdatedAt time.Time
	// OrderingKey is nil unless the subscription orders its deliveries:
	// then the next job of the key waits for this one to end.
	OrderingKey *string
	Event       ClaimedEvent
}

// ClaimedEvent is the stored event of a claimed job.
type ClaimedEvent struct {
	Seq             int64
	ID              string
	Key             string
	SchemaVersion   string
	Source          string
	Type            string
	Time            time.Time
	Subject         string
	DataContentType string
	DataSchema      string
	TraceParent     string
	TraceState      string
	Payload         []byte
	ReceivedAt      time.Time
}

// Claim atomically moves up to req.Limit due pending jobs to in_flight,
// leased to req.Owner until now + the subscription's attempt_timeout +
// req.LeaseMargin, and returns them with their subscription and event: one
// statement, one round trip.
//
// Tenants are interleaved so that one tenant's backlog never starves
// another (docs/concepts.md, Dispatch). The claim walks the tenants that have pending jobs
// (a loose index scan of delivery_jobs_due, cheap per tenant however deep
// its backlog) in a ring starting after req.After, keeps the first Limit
// that have due jobs, and gives each an equal share of the batch, its
// oldest due jobs first. Rows are locked FOR UPDATE SKIP LOCKED, so
// concurrent claimers in any number of processes never take the same job.
//
// A job whose subscription was deleted is canceled and one whose
// subscription is disabled becomes dead (subscription_disabled, replayable)
// here, without an attempt.
//
// Two delivery controls are kept here, where every instance's claims meet
// (docs/concepts.md, Ordered delivery and Rate limits). A job with an
// ordering key is claimed only when no live job of its subscription and
// key has a lower seq and none is in flight, so one job of a key is in
// flight at a time, in seq order, and a retry holds the key; and only
// below the ingest horizon (pull.go, readHorizon), so a lower seq of the
// key still being ingested by another partition's batch cannot be
// overtaken. A keyed job the claim finds held back is parked (park.go):
// taken out of every later claim's walk until the job ahead of it ends,
// whose transition releases it. A job of a subscription with a rate_limit
// is given the next slot of the subscription's limiter; one whose slot is
// still ahead stays pending, due at its slot, with no attempt spent. Jobs
// of subscriptions with neither pay nothing: the ordering probes are
// skipped for a NULL key, the parking steps run only behind a held job,
// and the limiter sees no rows.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	if req.Limit < 1 || req.Owner == "" {
		return ClaimResult{}, fmt.Errorf("claim jobs: need an owner and a limit of at least 1 (got %q, %d)", req.Owner, req.Limit)
	}
	// The horizon is read by a statement of its own, before the claim's
	// snapshot is taken (see readHorizon); the two share the round trip
	// and the implicit transaction that keeps the setting between them.
	var res ClaimResult
	pipe := &pgx.Batch{}
	pg.OnExec(pipe.Queue(readClaimHorizon), "read the ingest horizon", nil)
	pg.OnRows(pipe.Queue(claimJobs, pgx.StrictNamedArgs{
		"after": req.After, "ring_size": ClaimRingSize, "now": req.Now, "limit": req.Limit, "owner": req.Owner,
		"lease_margin_ms": max(req.LeaseMargin, 0).Milliseconds(), "skip": skipTenants(req.SkipTenants),
	}), "take jobs", func(rows pgx.Rows) error { return scanClaim(rows, &res) })
	if err := s.Pool.SendBatch(ctx, pipe).Close(); err != nil {
		return ClaimResult{}, pg.Classify(fmt.Errorf("claim jobs: %w", err))
	}
	slices.SortFunc(res.Jobs, func(a, b ClaimedJob) int { return cmp.Compare(a.Event.Seq, b.Event.Seq) })
	return res, nil
}

// scanClaim reads claimJobs' rows into res: the leased jobs and the one
// summary row.
func scanClaim(rows pgx.Rows, res *ClaimResult) error {
	for rows.Next() {
		if string(rows.RawValues()[0]) == "summary" {
			var resume *string
			dest := make([]any, len(rows.RawValues()))
			dest[1], dest[2], dest[3], dest[4], dest[5], dest[6] = &resume, &res.Canceled, &res.Disabled, &res.Orphaned, &res.RateLimited, &res.Parked
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			res.Resume = pg.ValueOrZero(resume)
			continue
		}
		job, err := scanClaimedJob(rows)
		if err != nil {
			return err
		}
		res.Jobs = append(res.Jobs, job)
	}
	return nil
}

// skipTenants is the claim's skip argument: never NULL, which would skip
// every tenant.
func skipTenants(tenants []string) []string {
	if tenants == nil {
		return []string{}
	}
	return tenants
}

// claimSummaryColumns are the columns before a job row's own: the row kind and
// the summary's fields, null on job rows.
const claimSummaryColumns = 7

func scanClaimedJob(rows pgx.Rows) (ClaimedJob, error) {
	var (
		j                                                         ClaimedJob
		subject, contentType, dataSchema, traceParent, traceState *string
	)
	e := &j.Event
	dest := make([]any, claimSummaryColumns, claimSummaryColumns+22)
	dest = append(dest, &j.ID, &j.Attempts, &j.Recoveries, &j.LeaseUntil, &j.TenantID, &j.SubscriptionID, &j.SubscriptionUpdatedAt,
		&j.OrderingKey,
		&e.Seq, &e.ID, &e.Key, &e.SchemaVersion, &e.Source, &e.Type, &e.Time, &subject, &contentType,
		&dataSchema, &traceParent, &traceState, &e.Payload, &e.ReceivedAt)
	if err := rows.Scan(dest...); err != nil {
		return ClaimedJob{}, err
	}
	e.Subject, e.DataContentType, e.DataSchema = pg.ValueOrZero(subject), pg.ValueOrZero(contentType), pg.ValueOrZero(dataSchema)
	e.TraceParent, e.TraceState = pg.ValueOrZero(traceParent), pg.ValueOrZero(traceState)
	return j, nil
}

// claimJobs is Claim's statement; each of its stages is described beside
// it in the .sql file.
//
//go:embed sql/claim_jobs.sql
var claimJobs string

// readClaimHorizon is readHorizon for a claim, which needs the horizon for
// keyed jobs only. Reading it scans pg_locks; while no keyed job is
// live (one probe of the partial index delivery_jobs_ordered) the claim
// skips that and keeps a horizon of 0 instead: a keyed job that commits
// between this statement and the claim's snapshot then waits for the next
// claim, which its own commit's notification wakes.
//
//go:embed sql/read_claim_horizon.sql
var readClaimHorizon string
