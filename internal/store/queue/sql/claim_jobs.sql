-- Claim's statement (claim.go). Its arguments are ClaimRequest's, with
-- ring_size ClaimRingSize and lease_margin_ms the margin in milliseconds.
--
-- Each stage is described above its CTE.
--
-- The result is one row per leased job and one summary row: where the next
-- claim resumes (after the last tenant served, or after the ring when none
-- was, so tenants beyond the ring are reached), what was settled without
-- an attempt and how many jobs were parked.

-- ring: the loose index scan. Each step is the first entry of
-- delivery_jobs_due above the previous tenant, wrapping to the first
-- overall, until the ring closes or holds @ring_size tenants. The index is
-- ordered by (tenant_id, next_attempt_at), so that one probe yields the
-- next tenant and its earliest next_attempt_at together. The wrap-around
-- branch of each UNION ALL ... LIMIT 1 runs only when the first finds
-- nothing. Steps run only as far as later parts read. (One probe for
-- the tenant and its earliest job, and the first step computed once,
-- keep a claim of one tenant to three walks of the index head; two
-- min() probes with the first step inlined into its three uses take
-- six.)
WITH RECURSIVE ring (tenant_id, earliest, first_tenant, n) AS (
    SELECT start.tenant_id, start.earliest, start.tenant_id, 1
    FROM (
        (SELECT tenant_id, next_attempt_at AS earliest FROM delivery_jobs
         WHERE state = 'pending' AND tenant_id > @after ORDER BY tenant_id, next_attempt_at LIMIT 1)
        UNION ALL
        (SELECT tenant_id, next_attempt_at FROM delivery_jobs
         WHERE state = 'pending' ORDER BY tenant_id, next_attempt_at LIMIT 1)
        LIMIT 1) start
  UNION ALL
    SELECT step.tenant_id, step.earliest, r.first_tenant, r.n + 1
    FROM ring r
    CROSS JOIN LATERAL (
        (SELECT tenant_id, next_attempt_at AS earliest FROM delivery_jobs
         WHERE state = 'pending' AND tenant_id > r.tenant_id ORDER BY tenant_id, next_attempt_at LIMIT 1)
        UNION ALL
        (SELECT tenant_id, next_attempt_at FROM delivery_jobs
         WHERE state = 'pending' ORDER BY tenant_id, next_attempt_at LIMIT 1)
        LIMIT 1) step
    WHERE r.n < @ring_size AND step.tenant_id <> r.first_tenant
),
-- due: ring tenants with at least one due job, in ring order, at most
-- @limit of them, apart from those in @skip (ClaimRequest.SkipTenants);
-- reading stops as soon as there are enough. (A separate
-- per-tenant due check is a trap: as EXISTS the planner may hash every
-- pending job; as LATERAL ... LIMIT 1 it chose a sequential scan that
-- walks past every claimed and finished row at the head of the table,
-- which grew each claim to tens of milliseconds under a backlog.)
due AS (
    SELECT tenant_id, n FROM ring WHERE earliest <= @now AND tenant_id <> ALL(@skip::text[]) LIMIT @limit
),
share AS (
    SELECT ceil(@limit::float8 / greatest(count(*), 1))::int AS per_tenant FROM due
),
-- picked: each due tenant's oldest due jobs, an equal share of the
-- batch, locked SKIP LOCKED: jobs another claimer holds are passed over.
-- Each keyed job is asked what holds it back (blocked_by): the seq of
-- the oldest live job of its key older than itself (a probe of
-- delivery_jobs_ordered, ordered so it stops at the first), else of
-- the job of its key in flight (delivery_jobs_ordered_in_flight: a
-- replayed dead letter is older than the job it may find in flight).
-- Unkeyed jobs skip both probes. A held job counts against the share:
-- the walk is never longer than the share, however many jobs a key
-- holds back, and the held ones are parked below.
picked AS (
    SELECT j.id, j.subscription_id, j.ordering_key, j.event_seq, j.next_attempt_at, j.shed_reason, j.blocked_by, d.tenant_id, d.n
    FROM due d
    CROSS JOIN LATERAL (
        SELECT id, subscription_id, ordering_key, event_seq, next_attempt_at, shed_reason,
            CASE WHEN j.ordering_key IS NOT NULL THEN coalesce(
                (SELECT b.event_seq FROM delivery_jobs b
                 WHERE b.subscription_id = j.subscription_id AND b.ordering_key = j.ordering_key
                   AND b.ordering_key IS NOT NULL AND b.event_seq < j.event_seq
                   AND b.state IN ('pending', 'in_flight')
                 ORDER BY b.event_seq LIMIT 1),
                (SELECT b.event_seq FROM delivery_jobs b
                 WHERE b.subscription_id = j.subscription_id AND b.ordering_key = j.ordering_key
                   AND b.ordering_key IS NOT NULL AND b.state = 'in_flight'
                 LIMIT 1)) END AS blocked_by
        FROM delivery_jobs j
        WHERE j.state = 'pending' AND j.tenant_id = d.tenant_id AND j.next_attempt_at <= @now
        ORDER BY j.next_attempt_at, j.event_seq
        LIMIT (SELECT per_tenant FROM share)
        FOR UPDATE SKIP LOCKED) j
),
-- chosen: round-robin over the tenants (each one's first job, then each
-- one's second, ...) up to @limit jobs, of those nothing holds back.
-- Every job of a key after its first is held back by it, which is why
-- one claim never takes two jobs of a key.
-- A keyed job at or above the ingest horizon waits too, unparked: a
-- lower seq of its key may still be committing, and no transition
-- would release a job parked behind that.
chosen AS (
    SELECT id, subscription_id, ordering_key, event_seq, shed_reason, n FROM (
        SELECT p.*, row_number() OVER (PARTITION BY p.tenant_id ORDER BY p.next_attempt_at, p.event_seq) AS rank
        FROM picked p
        WHERE p.blocked_by IS NULL
          AND (p.ordering_key IS NULL OR p.event_seq < current_setting('hubctl.ingest_horizon')::bigint)) ranked
    ORDER BY rank, n
    LIMIT @limit
),
-- settled: each job's fate by its subscription: leased, or canceled
-- (deleted subscription), or dead (disabled subscription; missing
-- event). settled is materialised so its verdict is computed once per
-- job, not once per column that reads it.
settled AS MATERIALIZED (
    SELECT c.id, c.n, c.subscription_id, c.ordering_key, c.event_seq, s.attempt_timeout_ms, s.updated_at, s.rate_limit,
        s.rate_limit IS NOT NULL AND c.shed_reason IS DISTINCT FROM 'rate_limited' AS needs_slot,
        CASE WHEN s.deleted_at IS NOT NULL THEN 'canceled'
             WHEN NOT s.enabled THEN 'subscription_disabled'
             WHEN NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = c.event_seq) THEN 'missing_event'
             ELSE 'claimed' END AS verdict
    FROM chosen c JOIN subscriptions s ON s.id = c.subscription_id
),
-- metered, rates: the jobs of rate-limited subscriptions that hold no
-- slot yet are numbered per subscription in seq order, and each
-- subscription's limiter row moves its tat past their slots (GCRA, one
-- slot every 1/rate_limit s from max(tat, now)). The upsert locks the
-- row, so concurrent claims in any process take consecutive slots; rows
-- are taken in subscription order, so two claims never wait on each
-- other in a cycle.
metered AS (
    SELECT id, subscription_id, interval '1 microsecond' * (1000000 / rate_limit) AS step,
        row_number() OVER (PARTITION BY subscription_id ORDER BY event_seq) AS k,
        count(*) OVER (PARTITION BY subscription_id) AS slots
    FROM settled WHERE verdict = 'claimed' AND needs_slot
),
rates AS (
    INSERT INTO subscription_rates AS r (subscription_id, tat, busy_since)
    SELECT subscription_id, @now::timestamptz + step * slots, @now FROM (
        SELECT DISTINCT subscription_id, step, slots FROM metered) m
    ORDER BY subscription_id
    ON CONFLICT (subscription_id) DO UPDATE SET
        tat = greatest(r.tat, @now::timestamptz) + (excluded.tat - excluded.busy_since),
        busy_since = CASE WHEN r.tat < @now THEN @now ELSE r.busy_since END
    RETURNING r.subscription_id, r.tat
),
-- holding, parked: a held job is parked (pending, next_attempt_at at
-- infinity, out of the walk of delivery_jobs_due) only while its
-- blocker, read again at its newest version under a FOR SHARE lock
-- (SKIP LOCKED), still holds it back: live and older, or in flight.
-- The lock makes the blocker's own transition wait for this claim, so
-- the release that transition runs afterwards sees the parked job; a
-- blocker already ended, or locked by a transition under way, parks
-- nothing. A job whose blocker this claim settles without an attempt
-- is not parked either.
holding AS (
    SELECT b.subscription_id, b.ordering_key, b.event_seq, b.state FROM delivery_jobs b
    JOIN (SELECT DISTINCT subscription_id, ordering_key, blocked_by FROM picked WHERE blocked_by IS NOT NULL) p
      ON b.subscription_id = p.subscription_id AND b.ordering_key = p.ordering_key AND b.event_seq = p.blocked_by
    WHERE b.ordering_key IS NOT NULL AND b.state IN ('pending', 'in_flight')
      AND EXISTS (SELECT 1 FROM picked WHERE blocked_by IS NOT NULL)
    FOR SHARE OF b SKIP LOCKED
),
parked AS (
    SELECT p.id, p.n FROM picked p
    JOIN holding h ON h.subscription_id = p.subscription_id AND h.ordering_key = p.ordering_key
                  AND h.event_seq = p.blocked_by
    WHERE (h.state = 'in_flight' OR h.event_seq < p.event_seq)
      AND NOT EXISTS (SELECT 1 FROM settled x WHERE x.subscription_id = p.subscription_id
                        AND x.event_seq = p.blocked_by AND x.verdict <> 'claimed')
),
-- unparking, released: a keyed job this claim settles without an
-- attempt (canceled, dead) was its key's head; the key's next live job,
-- if parked, is made due (due since it was created, as releaseHeads
-- does). Two cases are left to the sweep (ReleaseStrandedKeys): the
-- next job locked by someone else, and one parked by a claim that
-- committed after this claim's snapshot was taken (settling takes no
-- lock that the parking claim's FOR SHARE would make wait).
unparking AS (
    SELECT x.subscription_id, x.ordering_key, nx.event_seq, x.n FROM settled x
    CROSS JOIN LATERAL (
        SELECT b.event_seq, b.state, b.next_attempt_at FROM delivery_jobs b
        WHERE b.subscription_id = x.subscription_id AND b.ordering_key = x.ordering_key
          AND b.ordering_key IS NOT NULL AND b.event_seq > x.event_seq AND b.state IN ('pending', 'in_flight')
        ORDER BY b.event_seq LIMIT 1) nx
    WHERE x.ordering_key IS NOT NULL AND x.verdict <> 'claimed'
      AND nx.state = 'pending' AND nx.next_attempt_at = 'infinity'
),
released AS (
    SELECT b.id, u.n FROM delivery_jobs b
    JOIN unparking u ON b.subscription_id = u.subscription_id AND b.ordering_key = u.ordering_key
                    AND b.event_seq = u.event_seq
    WHERE b.state = 'pending' AND b.next_attempt_at = 'infinity' AND EXISTS (SELECT 1 FROM unparking)
    FOR UPDATE OF b SKIP LOCKED
),
-- fate, claimed: a job whose slot is ahead is left pending, due at its
-- slot and marked as holding it (shed_reason rate_limited), the rest
-- as settled, parked and released say. The update finds the jobs by
-- their ids as an array too: that lets the executor skip the day
-- partitions none of them is in, and keeps the planner from hashing
-- whole partitions to join a few dozen rows. Its pending check reads
-- the state from fate (held_state), not a constant: against the
-- constant the planner also walked the whole partial index of due
-- jobs, which grows with the backlog, to AND its bitmap with the
-- primary key's.
fate AS (
    SELECT x.id, x.n, x.attempt_timeout_ms, x.updated_at, slot.at AS slot, 'pending'::text AS held_state,
        CASE WHEN x.verdict = 'claimed' AND slot.at > @now THEN 'rate_limited' ELSE x.verdict END AS verdict
    FROM settled x
    LEFT JOIN (
        SELECT m.id, rt.tat - m.step * (m.slots - m.k + 1) AS at
        FROM metered m JOIN rates rt ON rt.subscription_id = m.subscription_id) slot ON slot.id = x.id
    UNION ALL
    SELECT id, n, NULL, NULL, NULL, 'pending', 'parked' FROM parked
    UNION ALL
    SELECT id, n, NULL, NULL, NULL, 'pending', 'released' FROM released
),
claimed AS (
    UPDATE delivery_jobs j SET
        state = CASE x.verdict WHEN 'claimed' THEN 'in_flight' WHEN 'canceled' THEN 'canceled'
                               WHEN 'rate_limited' THEN 'pending' WHEN 'parked' THEN 'pending'
                               WHEN 'released' THEN 'pending' ELSE 'dead' END,
        dead_reason = CASE x.verdict WHEN 'subscription_disabled' THEN 'subscription_disabled'
                                     WHEN 'missing_event' THEN 'poison' END,
        dead_at = CASE WHEN x.verdict IN ('subscription_disabled', 'missing_event') THEN @now::timestamptz END,
        lease_owner = CASE WHEN x.verdict = 'claimed' THEN @owner END,
        lease_until = CASE WHEN x.verdict = 'claimed'
                           THEN @now::timestamptz + (x.attempt_timeout_ms + @lease_margin_ms::bigint) * interval '1 millisecond' END,
        last_error = CASE WHEN x.verdict = 'missing_event' THEN 'the event of this job is missing from the inbox'
                          ELSE j.last_error END,
        next_attempt_at = CASE x.verdict WHEN 'rate_limited' THEN x.slot WHEN 'parked' THEN 'infinity'
                                         WHEN 'released' THEN least(j.created_at, @now::timestamptz) ELSE j.next_attempt_at END,
        shed_reason = CASE WHEN x.verdict = 'rate_limited' THEN 'rate_limited' END,
        shed_at = CASE WHEN x.verdict = 'rate_limited' THEN @now::timestamptz END,
        updated_at = @now
    FROM fate x
    WHERE j.id = ANY(ARRAY(SELECT id FROM fate)) AND j.id = x.id AND j.state = x.held_state
    RETURNING j.id, j.tenant_id, j.subscription_id, x.updated_at AS subscription_updated_at, j.event_seq, j.attempts,
        j.recoveries, j.lease_until, j.ordering_key, x.verdict, x.n
)
SELECT 'job', NULL, NULL, NULL, NULL, NULL, NULL, c.id, c.attempts, c.recoveries, c.lease_until, c.tenant_id, c.subscription_id, c.subscription_updated_at,
	c.ordering_key,
	e.seq, e.id::text, e.event_key, e.schema_version, e.source, e.type, e.time, e.subject, e.datacontenttype,
	e.dataschema, e.traceparent, e.tracestate, e.payload, e.received_at
FROM claimed c
JOIN events e ON e.seq = c.event_seq
WHERE c.verdict = 'claimed'
UNION ALL
SELECT 'summary',
    coalesce((SELECT tenant_id FROM claimed ORDER BY n DESC LIMIT 1),
             (SELECT tenant_id FROM ring ORDER BY n DESC LIMIT 1)),
    (SELECT count(*) FROM claimed WHERE verdict = 'canceled')::int,
    (SELECT count(*) FROM claimed WHERE verdict = 'subscription_disabled')::int,
    (SELECT count(*) FROM claimed WHERE verdict = 'missing_event')::int,
    (SELECT count(*) FROM claimed WHERE verdict = 'rate_limited')::int,
    (SELECT count(*) FROM claimed WHERE verdict = 'parked')::int,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
