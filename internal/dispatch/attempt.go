package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/backoff"
	"github.com/hubctl/hubctl/internal/breaker"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/tracing"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// While the database is unavailable, an attempt's result is kept and its
// recording tried again (recordBackoff) for as long as the job's lease
// lasts. Recorded in time,
// a delivered job is succeeded and never sent again, however long the
// outage was within the lease. Past the lease another process may recover
// the job and attempt it again, so the result is given up on: at least
// once, never lost.
// recordBackoff spaces the tries of recording an attempt while the
// database is unavailable.
var recordBackoff = backoff.Policy{Min: 100 * time.Millisecond, Max: 2 * time.Second}

// retryWhileLeased runs try until it succeeds, fails for a reason other
// than an unavailable database, ctx ends, or the next try would start after
// leaseUntil.
func (d *Dispatcher) retryWhileLeased(ctx context.Context, leaseUntil time.Time, try func() error) error {
	return recordBackoff.Retry(ctx, try, func(err error, _ int, wait time.Duration) bool {
		return !pg.IsUnavailable(err) || d.clock().Add(wait).After(leaseUntil)
	})
}

// attempt makes the one attempt a claim allows. A failure is recorded
// before it returns; a success is handed to the recorder, which commits it
// with others (the job's lease covers the wait).
func (d *Dispatcher) attempt(ctx context.Context, job queuedJob) {
	sub := *job.sub
	log := d.log.With("job_id", job.ID, "subscription_id", sub.ID, "tenant_id", sub.TenantID)
	if !leaseCoversAttempt(job.LeaseUntil, d.clock(), sub.AttemptTimeout, d.margin) {
		d.release(ctx, job, log)
		return
	}
	// A purge's fence cuts the delivery short, and only the delivery: a
	// recording it cut would leave the job in flight under its lease, the
	// purge waiting for it, and a failure's recording is what waits for
	// the purge's fence (both take the ingest lock) until it is heard.
	deliveryCtx, done, fenced := d.purges.start(ctx, job.ClaimedJob)
	if fenced {
		d.cancelPurged(ctx, job, log)
		return
	}
	defer done()

	opened, openErr := d.sinks.acquire(sub, d.clock())
	if openErr == nil {
		defer d.sinks.release(opened, sub.ID)
	}
	deliveryID, err := uuid.NewV7()
	if err != nil {
		log.Error("cannot draw a delivery id; the lease will expire and the job be retried", "error", err)
		return
	}

	var (
		started = d.clock()
		out     sink.Outcome
		permit  breaker.Permit
	)
	if openErr != nil {
		// Nothing reached the destination, so its breaker hears nothing;
		// the attempt still counts, or a subscription whose secret can no
		// longer be decrypted would be retried forever.
		log.Error("cannot open the subscription's sink", "error", openErr)
		out = sink.Outcome{Error: "cannot open the sink: " + openErr.Error()}
	} else {
		var retryAt time.Time
		var allowed bool
		permit, retryAt, allowed = d.breakers.Allow(breakerKey(sub), started)
		if !allowed {
			d.shed(ctx, job, retryAt, log)
			return
		}
		out = d.deliver(deliveryCtx, opened, job, sub, deliveryID.String())
	}
	finished := d.clock()
	if errors.Is(context.Cause(deliveryCtx), errPurged) {
		d.cancelPurged(ctx, job, log)
		return
	}
	if deliveryCtx.Err() != nil {
		// Cut short by the drain timeout: not the destination's doing.
		log.Warn("attempt abandoned at shutdown; its lease will expire and the job be retried", "delivery_id", deliveryID)
		return
	}
	switch {
	case openErr != nil:
	case out.NotSent:
		d.breakers.Release(permit, finished)
	default:
		d.breakers.Report(permit, out.OK, finished)
	}

	result := queue.Attempt{
		JobID: job.ID, SubscriptionID: sub.ID, Owner: d.owner, DeliveryID: deliveryID,
		StartedAt: started, Duration: finished.Sub(started),
		OK: out.OK, StatusCode: out.StatusCode, Error: out.Error, Response: out.Response,
		OrderingKey: job.OrderingKey, EventID: job.Event.ID,
	}
	if !out.OK {
		result.Retry = nextRetry(job.curve, job.Attempts+1, out.RetryAfter, finished, d.rnd)
	}
	d.observe(sub.SinkType, out.OK, result.Duration, job.Event.ReceivedAt, job.Event.Time, finished)
	if out.OK {
		d.successes <- success{attempt: result, eventID: job.Event.ID, leaseUntil: job.LeaseUntil, log: log,
			ordered: job.OrderingKey != nil}
		return
	}
	res, err := d.record(ctx, result, job.LeaseUntil)
	if err != nil {
		log.Error("cannot record the attempt; the lease will expire and the job be retried",
			"delivery_id", deliveryID, "error", err)
		return
	}
	attrs := []any{"delivery_id", deliveryID, "event_id", job.Event.ID, "attempt", res.Number, "status", out.StatusCode}
	switch {
	case res.Gone:
		log.Debug("attempt of a job purged meanwhile; nothing recorded", attrs...)
		return
	case res.AlreadyRecorded:
		log.Info("attempt was recorded by a try whose answer the database connection lost", attrs...)
		if job.OrderingKey != nil {
			d.Wake() // that try may have dead-lettered the key's head
		}
		return
	case !res.Owned:
		log.Warn("attempt recorded after its lease was recovered; the job moved on without it", attrs...)
	case res.Dead:
		log.Info("delivery failed; attempts exhausted, job dead-lettered", append(attrs, "error", out.Error)...)
		if job.OrderingKey != nil {
			d.Wake() // the key's next job may go now
		}
	default:
		log.Debug("delivery failed; retry scheduled", append(attrs, "error", out.Error, "retry_at", result.Retry.At)...)
	}
	if res.AutoDisabled {
		d.metrics.autoDisabled.Inc()
		log.Warn("subscription auto-disabled after a sustained failure span; its queued jobs are dead-lettered",
			"shed_jobs", res.ShedJobs)
	}
}

// leaseCoversAttempt reports whether a lease ending at leaseUntil still
// holds a whole attempt of timeout and its recording (margin) when the
// attempt starts at now. A job that waited in the queue past its allowance
// must not be attempted: its lease could expire mid-attempt and the job be
// recovered and attempted twice at once.
func leaseCoversAttempt(leaseUntil, now time.Time, timeout, margin time.Duration) bool {
	return !now.Add(timeout + margin).After(leaseUntil)
}

// release hands back a claimed job this worker will not attempt.
func (d *Dispatcher) release(ctx context.Context, job queuedJob, log *slog.Logger) {
	if _, err := d.jobs.Release(ctx, d.owner, []uuid.UUID{job.ID}); err != nil {
		log.Warn("cannot release a job whose lease is too short for an attempt; it will expire and the job be retried", "error", err)
		return
	}
	log.Info("released a job that waited in the queue too long for its lease to cover an attempt", "lease_until", job.LeaseUntil)
}

// breakerKey is the (tenant, destination) pair a breaker is kept for (docs/concepts.md, Circuit breaker).
func breakerKey(sub catalog.Subscription) string {
	return keyOf(oncall.Destination{TenantID: sub.TenantID, Destination: sub.Destination})
}

// keyOf is the breaker key of a destination; destinationOf reads it back.
func keyOf(d oncall.Destination) string { return d.TenantID + "|" + d.Destination }

// shed hands the job back untouched, due when the breaker may let it through.
func (d *Dispatcher) shed(ctx context.Context, job queuedJob, retryAt time.Time, log *slog.Logger) {
	if _, err := d.jobs.Shed(ctx, job.ID, d.owner, retryAt, hubapi.HeldBreakerOpen); err != nil {
		log.Warn("cannot shed the job; its lease will expire and it be retried", "error", err)
		return
	}
	d.metrics.shed.Inc()
}

// record stores the attempt, trying again while the database is
// unavailable and the job's lease lasts.
func (d *Dispatcher) record(ctx context.Context, a queue.Attempt, leaseUntil time.Time) (res queue.CompleteResult, err error) {
	err = d.retryWhileLeased(ctx, leaseUntil, func() error {
		res, err = d.jobs.CompleteReported(ctx, a, d.autoDisable, d.report.failure)
		return err
	})
	return res, err
}

func (d *Dispatcher) observe(sinkType string, ok bool, took time.Duration, receivedAt, produced, finished time.Time) {
	outcome := outcomeName(ok)
	if ok {
		d.metrics.lagSeconds.Observe(max(finished.Sub(receivedAt), 0).Seconds())
		d.metrics.latencySeconds.Observe(max(finished.Sub(produced), 0).Seconds())
	}
	d.metrics.deliveries.WithLabelValues(sinkType, outcome).Inc()
	d.metrics.attemptSeconds.WithLabelValues(sinkType).Observe(took.Seconds())
}

// deliver makes the sink call, inside an attempt span when tracing is on:
// the span is a child of the event's trace context, and the destination
// receives the span's traceparent (same trace id) instead of the event's.
// With tracing off the event's trace context is sent verbatim.
func (d *Dispatcher) deliver(ctx context.Context, opened *openedSink, job queuedJob, sub catalog.Subscription, deliveryID string) sink.Outcome {
	del := delivery(job, deliveryID)
	if d.tracing == nil {
		return opened.sink.Deliver(ctx, del)
	}
	ctx, span := d.tracing.StartAttempt(ctx, tracing.Attempt{
		SinkType: sub.SinkType, Destination: sub.Destination, SubscriptionID: sub.ID.String(),
		TenantID: sub.TenantID, EventID: job.Event.ID, DeliveryID: deliveryID, Number: job.Attempts + 1,
		TraceParent: del.TraceParent, TraceState: del.TraceState,
	})
	del.TraceParent, del.TraceState = tracing.Headers(ctx)
	out := opened.sink.Deliver(ctx, del)
	tracing.EndAttempt(span, outcomeName(out.OK), out.OK, out.StatusCode, out.Error)
	return out
}

func outcomeName(ok bool) string {
	if ok {
		return "succeeded"
	}
	return "failed"
}

// delivery is what the sink needs of a claimed job.
func delivery(job queuedJob, deliveryID string) sink.Delivery {
	e := job.Event
	return sink.Delivery{
		DeliveryID:      deliveryID,
		EventID:         e.ID,
		EventKey:        e.Key,
		TenantID:        job.sub.TenantID,
		Source:          e.Source,
		Type:            e.Type,
		Time:            e.Time,
		SchemaVersion:   e.SchemaVersion,
		Subject:         e.Subject,
		DataContentType: e.DataContentType,
		DataSchema:      e.DataSchema,
		TraceParent:     e.TraceParent,
		TraceState:      e.TraceState,
		OrderingKey:     orderingKey(job.OrderingKey),
		Payload:         e.Payload,
		Timeout:         job.sub.AttemptTimeout,
	}
}

// orderingKey is a claimed job's ordering key for the sink: "" when the
// subscription does not order.
func orderingKey(key *string) string {
	if key == nil {
		return ""
	}
	return *key
}
