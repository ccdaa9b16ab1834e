package dispatch

import (
	"context"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/opevents"
	opstore "github.com/hubctl/hubctl/internal/store/opevents"
)

// DefaultDeadLetterWindow is how long a subscription's dead letters of one
// reason gather into one hub.deliveries_dead_lettered (SPEC §11: at most
// one a minute).
const DefaultDeadLetterWindow = time.Minute

// reporter writes what dispatch does to a subscription as operational
// events (docs/operational-events.md), each in the transaction of what it
// reports.
type reporter struct {
	events       opevents.Builder
	failingAfter int
	window       time.Duration
}

// failure is the queue.FailureReport of a recorded failure: failing once
// per span, auto-disabled, and its dead letters added to their windows.
func (r reporter) failure(ctx context.Context, tx pgx.Tx, f queue.RecordedFailure) error {
	decided := opevents.OnFailure(f, r.failingAfter)
	sub := opevents.Subject{ID: f.Attempt.SubscriptionID, TenantID: f.TenantID, Name: f.SubscriptionName}
	at := f.Attempt.StartedAt.Add(f.Attempt.Duration)
	var events []opstore.Event
	add := func(key string, fields map[string]any) error {
		e, err := r.events.New(key, sub, opevents.Hub, at, fields)
		events = append(events, e)
		return err
	}
	if decided.Failing {
		if err := add(opevents.SubscriptionFailing, opevents.FailingFields(f)); err != nil {
			return err
		}
		if err := opstore.MarkSpanReported(ctx, tx, sub.ID); err != nil {
			return err
		}
	}
	if decided.Disabled {
		if err := add(opevents.SubscriptionDisabled, opevents.AutoDisabledFields(f)); err != nil {
			return err
		}
	}
	if _, err := opstore.Write(ctx, tx, events, opevents.Route); err != nil {
		return err
	}
	for _, d := range decided.DeadLetters {
		if d.EventIDs == nil && len(f.ShedSeqs) > 0 {
			ids, err := opstore.EventIDsOf(ctx, tx, f.ShedSeqs)
			if err != nil {
				return err
			}
			d.EventIDs = ids
		}
		if err := opstore.AddDeadLetters(ctx, tx, d, r.window, r.deadLettered); err != nil {
			return err
		}
	}
	return nil
}

// ReportPoisoned is the queue.PoisonReport of lease recovery: the jobs it
// dead-lettered as poison are added to their subscriptions' windows.
func (d *Dispatcher) ReportPoisoned(ctx context.Context, tx pgx.Tx, poisoned []queue.Poisoned, at time.Time) error {
	for _, dl := range opevents.OnPoison(poisoned, at) {
		ids, err := opstore.EventIDsOf(ctx, tx, dl.Seqs)
		if err != nil {
			return err
		}
		dl.DeadLetters.EventIDs = ids
		if err := opstore.AddDeadLetters(ctx, tx, dl.DeadLetters, d.report.window, d.report.deadLettered); err != nil {
			return err
		}
	}
	return nil
}

// deadLettered writes one hub.deliveries_dead_lettered per report.
func (r reporter) deadLettered(ctx context.Context, tx pgx.Tx, windows []opstore.DeadLetterReport) error {
	events := make([]opstore.Event, 0, len(windows))
	for _, w := range windows {
		e, err := r.events.New(opevents.DeliveriesDeadLettered,
			opevents.Subject{ID: w.SubscriptionID, TenantID: w.TenantID, Name: w.SubscriptionName},
			opevents.Hub, w.At, opevents.DeadLetteredFields(w))
		if err != nil {
			return err
		}
		events = append(events, e)
	}
	_, err := opstore.Write(ctx, tx, events, opevents.Route)
	return err
}

// recovered writes hub.subscription_recovered for a span reported failing
// that a success closed.
func (r reporter) recovered(ctx context.Context, tx pgx.Tx, s opstore.ClosedSpan) error {
	e, err := r.events.New(opevents.SubscriptionRecovered, opevents.Subject{ID: s.SubscriptionID, TenantID: s.TenantID, Name: s.SubscriptionName},
		opevents.Hub, s.RecoveredAt, opevents.RecoveredFields(s))
	if err != nil {
		return err
	}
	_, err = opstore.Write(ctx, tx, []opstore.Event{e}, opevents.Route)
	return err
}

// closeReportedSpans closes the spans reported failing that a batch of
// successes reached, each with its recovery in a transaction of its own:
// rare (a span reported failing is one of STREAMING_HUB_BREAKER_FAILURES
// failures and more), so the batch's own statement stays one. A span left
// open by an error here is closed by the subscription's next success.
func (d *Dispatcher) closeReportedSpans(ctx context.Context, batch []success, results []queue.CompleteResult) {
	finished := map[uuid.UUID]time.Time{}
	for i, s := range batch {
		if results[i].ReportedSpanOpen {
			finished[s.attempt.SubscriptionID] = maxTime(finished[s.attempt.SubscriptionID], s.attempt.StartedAt.Add(s.attempt.Duration))
		}
	}
	for sub, at := range finished {
		if _, err := opstore.CloseReportedSpan(ctx, d.jobs.Pool, sub, at, d.report.recovered); err != nil {
			d.log.Warn("cannot close a failure span reported failing; the subscription's next success will", "subscription_id", sub, "error", err)
		}
	}
}

// ReportDeadLetters ends the dead letter windows that have run their
// course at now, reporting what they gathered, as the maintenance service
// dead_letter_reports runs it. It returns how many windows it ended.
func (d *Dispatcher) ReportDeadLetters(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n, err := opstore.FlushDeadLetters(ctx, d.jobs.Pool, now, d.report.window, deadLetterFlushBatch, d.report.deadLettered)
		total += n
		if err != nil || n < deadLetterFlushBatch {
			return total, err
		}
	}
}

// deadLetterFlushBatch bounds the windows one transaction reports.
const deadLetterFlushBatch = 100

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
