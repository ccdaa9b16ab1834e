// Package dispatch is the delivery half of the hub (docs/concepts.md, Dispatch): it claims due
// delivery jobs from the database, makes exactly one attempt per claim
// through the subscription's sink, and records what happened.
//
// Claimers feed a local queue (fairQueue) that STREAMING_HUB_DISPATCH_WORKERS
// long-lived workers drain, starting each attempt on a goroutine of its own
// within the in-flight caps (per process, tenant and destination). How claims interleave tenants, how they are
// sized (claimSize, claimRoom) and why: docs/architecture.md, Decisions,
// "Fairness holds up to the attempt". A claimer claims again at once after
// a claim that found work, and otherwise sleeps until ingest signals new
// jobs (LISTEN on pg.JobsChannel, on a connection of its own that is
// reopened when lost) or STREAMING_HUB_DISPATCH_IDLE_INTERVAL passes,
// whichever comes first. The interval is what picks up retries coming due
// and jobs shed by an open breaker.
//
// A claim names each job's subscription and the version (updated_at) it
// found enabled, not the row: the claimer pairs jobs with rows it keeps,
// reading in one query only those it lacks or holds in an older version.
//
// Per attempt: the sink is opened (or taken from a cache keyed by the
// subscription's id and updated_at, so secrets are decrypted once per
// version of the subscription), the (tenant, destination) breaker is asked,
// and either the job is shed without spending an attempt, or the sink makes
// the attempt with a fresh UUIDv7 delivery id and the subscription's
// attempt_timeout, and the breaker hears the outcome. A failure is recorded
// by the worker with queue.Complete in one transaction: attempt row, job
// transition (retry on the subscription's curve, dead when exhausted),
// failure span and auto-disable. A success goes to the recorder, which
// commits every success waiting for it in one transaction
// (queue.CompleteSuccesses): while one batch commits the next gathers, so
// batches grow with the delivery rate and no delivery waits for a timer.
//
// Decisions worth knowing:
//
//   - Leases are the subscription's attempt_timeout plus a margin (15s by
//     default) for recording the result, plus 10s for waiting in the local
//     queue. A job still queued when its lease could no longer cover a
//     whole attempt and its recording is released (pending, nothing spent)
//     instead of attempted. A worker that dies or loses the database leaves
//     its lease to expire; lease recovery, a maintenance service of every
//     delivering process (internal/maintenance), returns expired jobs to
//     pending; once a job has been recovered
//     STREAMING_HUB_POISON_THRESHOLD times, the next expiry dead-letters it
//     as poison.
//     A result that arrives after its lease was recovered is still
//     recorded as an attempt, but moves the job no further.
//   - Recording a success is not acknowledged to the worker: a success
//     lost with the process (or to a database outage longer than the
//     record retries) leaves its lease to expire, and the job is delivered
//     again. At least once allows that; durability is not relaxed for it.
//   - A failure a sink decided before sending anything (sink.Outcome.NotSent:
//     an event too large for SQS or EventBridge, a request that cannot be
//     built) is recorded and retried like any other, but the breaker does
//     not hear of it: it says nothing about the destination, and a few such
//     events must not shed a tenant's healthy ones.
//   - Breaker state is per process (by design); with several
//     processes a dead destination gets failures + probes attempts from
//     each.
//   - Shutdown stops claiming at once, lets attempts in flight finish
//     within DrainTimeout, releases the queued jobs nobody started, and
//     records the successes still waiting (within DrainTimeout again); an
//     attempt cut short is not recorded, its lease expires and another
//     worker retries it.
//   - A stored retry_schedule that no longer parses is replaced by the
//     default curve and logged once per version of the subscription.
//   - Logs carry ids (job, subscription, tenant, delivery, event) and
//     outcomes, and breaker keys (tenant and scheme://host:port), never
//     payloads, URL paths or secrets.
package dispatch
