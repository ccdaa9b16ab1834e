package opevents

import (
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"

	"github.com/google/uuid"

	opstore "github.com/hubctl/hubctl/internal/store/opevents"
)

// DefaultFailingAfter is how many consecutive failed attempts make a
// subscription failing when the setting gives none: the breaker's
// default (STREAMING_HUB_BREAKER_FAILURES).
const DefaultFailingAfter = 5

// Dead-letter reasons a failure reports (docs/api.md, "Tenant API: dead letters").
const (
	reasonExhausted            = "exhausted"
	reasonSubscriptionDisabled = "subscription_disabled"
	reasonPoison               = "poison"
)

// FailureReport is what one recorded failure is reported as.
type FailureReport struct {
	// Failing: the span just reached failingAfter consecutive failures
	// and was not reported yet (once per span).
	Failing bool
	// Disabled: the failure auto-disabled the subscription.
	Disabled bool
	// DeadLetters to add to the subscription's windows.
	DeadLetters []opstore.DeadLetters
}

// OnFailure decides how a recorded failure is reported (SPEC §11).
// failingAfter is STREAMING_HUB_BREAKER_FAILURES; 0 is the default. A
// subscription deleted or disabled meanwhile is not reported failing: it
// delivers nothing more whatever its destination does.
func OnFailure(f queue.RecordedFailure, failingAfter int) FailureReport {
	if failingAfter <= 0 {
		failingAfter = DefaultFailingAfter
	}
	finished := f.Attempt.StartedAt.Add(f.Attempt.Duration)
	r := FailureReport{
		Failing:  f.Live && !f.SpanReported && f.SpanFailures >= failingAfter,
		Disabled: f.Result.AutoDisabled,
	}
	if f.Result.Dead {
		var ids []uuid.UUID
		if id, err := uuid.Parse(f.Attempt.EventID); err == nil {
			ids = []uuid.UUID{id}
		}
		r.DeadLetters = append(r.DeadLetters, opstore.DeadLetters{SubscriptionID: f.Attempt.SubscriptionID, TenantID: f.TenantID,
			Reason: reasonExhausted, Count: 1, EventIDs: ids, At: finished})
	}
	if f.Result.ShedJobs > 0 {
		r.DeadLetters = append(r.DeadLetters, opstore.DeadLetters{SubscriptionID: f.Attempt.SubscriptionID, TenantID: f.TenantID,
			Reason: reasonSubscriptionDisabled, Count: f.Result.ShedJobs, At: finished})
	}
	return r
}

// PoisonedDeadLetters are one subscription's jobs a lease recovery
// dead-lettered as poison, with the seqs of their first events.
type PoisonedDeadLetters struct {
	opstore.DeadLetters
	Seqs []int64
}

// OnPoison groups the jobs a lease recovery dead-lettered as poison by
// subscription, in the order of their first appearance.
func OnPoison(poisoned []queue.Poisoned, at time.Time) []PoisonedDeadLetters {
	var out []PoisonedDeadLetters
	index := map[uuid.UUID]int{}
	for _, p := range poisoned {
		i, ok := index[p.SubscriptionID]
		if !ok {
			i = len(out)
			index[p.SubscriptionID] = i
			out = append(out, PoisonedDeadLetters{DeadLetters: opstore.DeadLetters{SubscriptionID: p.SubscriptionID, TenantID: p.TenantID,
				Reason: reasonPoison, At: at}})
		}
		out[i].Count++
		if len(out[i].Seqs) < opstore.MaxDeadLetterIDs {
			out[i].Seqs = append(out[i].Seqs, p.EventSeq)
		}
	}
	return out
}

// FailingFields are hub.subscription_failing's data.
func FailingFields(f queue.RecordedFailure) map[string]any {
	var status any
	if f.Attempt.StatusCode != 0 {
		status = f.Attempt.StatusCode
	}
	return map[string]any{
		"failing_since": utc(f.Span.FailingSince), "consecutive_failures": f.SpanFailures,
		"last_error": f.Attempt.Error, "last_status": status,
	}
}

// AutoDisabledFields are the data of hub.subscription_disabled when the hub
// switched the subscription off.
func AutoDisabledFields(f queue.RecordedFailure) map[string]any {
	return map[string]any{"trigger": TriggerAutomatic, "failing_since": utc(f.Span.FailingSince), "last_failure_at": utc(f.Span.LastFailureAt)}
}

// RecoveredFields are hub.subscription_recovered's data.
func RecoveredFields(s opstore.ClosedSpan) map[string]any {
	return map[string]any{"failing_since": utc(s.FailingSince)}
}

// DeadLetteredFields are hub.deliveries_dead_lettered's data.
func DeadLetteredFields(w opstore.DeadLetterReport) map[string]any {
	ids := make([]string, len(w.EventIDs))
	for i, id := range w.EventIDs {
		ids[i] = id.String()
	}
	return map[string]any{"reason": w.Reason, "count": w.Count, "event_ids": ids, "since": utc(w.Since)}
}

// utc is t as the data shows times; nil when zero.
func utc(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}
