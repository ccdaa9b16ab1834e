package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"
)

// success is a successful attempt waiting to be recorded.
type success struct {
	attempt    queue.Attempt
	eventID    string
	leaseUntil time.Time
	log        *slog.Logger // carries the job's ids
	// ordered says the job has an ordering key: its key's next job may be
	// claimed once this success is recorded.
	ordered bool
}

// recordSuccesses is the recorder: it commits successful attempts many to
// a transaction (group commit) until d.successes is closed and drained.
// While one transaction commits the next batch gathers, so the batch grows
// with the rate of deliveries and a single delivery waits for no timer.
// Failures are not batched: they are rarer, each needs its subscription's
// failure span read and decided on, and the worker that made the attempt
// records it before taking the next job.
func (d *Dispatcher) recordSuccesses(ctx context.Context) {
	batch := make([]success, 0, maxRecordBatch)
	for first := range d.successes {
		batch = append(batch[:0], first)
		batch = gather(batch, d.successes)
		d.recordBatch(ctx, batch)
	}
}

// gather appends to batch what ch holds right now, up to maxRecordBatch in
// all, without waiting.
func gather(batch []success, ch <-chan success) []success {
	for len(batch) < maxRecordBatch {
		select {
		case s, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, s)
		default:
			return batch
		}
	}
	return batch
}

// recordBatch records one batch, trying again while the database is
// unavailable and the batch's longest lease lasts (a job whose lease ran
// out meanwhile is recorded as a late attempt, which is harmless). Past
// that the leases are left to expire and the jobs are delivered again: at
// least once, never lost.
func (d *Dispatcher) recordBatch(ctx context.Context, batch []success) {
	attempts := make([]queue.Attempt, len(batch))
	var leaseUntil time.Time
	for i, s := range batch {
		attempts[i] = s.attempt
		if s.leaseUntil.After(leaseUntil) {
			leaseUntil = s.leaseUntil
		}
	}
	var results []queue.CompleteResult
	err := d.retryWhileLeased(ctx, leaseUntil, func() (err error) {
		results, err = d.jobs.CompleteSuccesses(ctx, attempts)
		return err
	})
	if err == nil {
		d.closeReportedSpans(ctx, batch, results)
	}
	unblocked := false
	for i, s := range batch {
		unblocked = unblocked || s.ordered && err == nil
		attrs := []any{"delivery_id", s.attempt.DeliveryID, "event_id", s.eventID, "status", s.attempt.StatusCode}
		switch {
		case err != nil:
			s.log.Error("cannot record the attempt; the lease will expire and the job be retried", append(attrs, "error", err)...)
		case results[i].Gone:
			s.log.Debug("attempt of a job purged meanwhile; nothing recorded", attrs...)
		case results[i].AlreadyRecorded:
			s.log.Info("attempt was recorded by a try whose answer the database connection lost", append(attrs, "attempt", results[i].Number)...)
		case !results[i].Owned:
			s.log.Warn("attempt recorded after its lease was recovered; the job moved on without it", append(attrs, "attempt", results[i].Number)...)
		default:
			s.log.Debug("delivered", append(attrs, "attempt", results[i].Number)...)
		}
	}
	if unblocked {
		// The next job of an ordered key became claimable only now; a
		// claim need not wait for the idle interval to find it.
		d.Wake()
	}
}
