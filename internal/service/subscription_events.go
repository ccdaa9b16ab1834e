package service

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/match"
	"github.com/hubctl/hubctl/internal/opevents"
	opstore "github.com/hubctl/hubctl/internal/store/opevents"
)

// By is the use cases acting for actor: the operational events of the
// changes they make name it (docs/operational-events.md). Without By they
// act as the admin, which is what the CLI's direct mode is.
func (s *Subscriptions) By(actor opevents.Actor) *Subscriptions {
	c := *s
	c.actor = actor
	return &c
}

// reportedEvent is one operational event a change is reported as: its key
// and the data beyond what every event carries.
type reportedEvent struct {
	key    string
	fields map[string]any
}

// changeEvents is how a change of a subscription row is reported (SPEC
// §11): before is zero for a create, after zero for a delete. An update
// lists the names of the fields it changed, never their values; enabling,
// disabling, a new signing secret and a failed verification have events
// of their own. What the hub keeps about the row for itself (verification
// bookkeeping, the failure span, the version) is no field a tenant
// changed.
func changeEvents(before, after catalog.Subscription) []reportedEvent {
	switch {
	case before.ID == [16]byte{}:
		return []reportedEvent{{opevents.SubscriptionCreated, map[string]any{"sink_type": after.SinkType, "event_types": after.EventTypes}}}
	case after.ID == [16]byte{}:
		return []reportedEvent{{opevents.SubscriptionDeleted, nil}}
	}
	var out []reportedEvent
	if changed := changedFields(before, after); len(changed) > 0 {
		out = append(out, reportedEvent{opevents.SubscriptionUpdated, map[string]any{"changed": changed}})
	}
	switch {
	case !before.Enabled && after.Enabled:
		out = append(out, reportedEvent{opevents.SubscriptionEnabled, nil})
	case before.Enabled && !after.Enabled:
		out = append(out, reportedEvent{opevents.SubscriptionDisabled, map[string]any{
			"trigger": opevents.TriggerManual, "failing_since": utcPtr(after.FailingSince), "last_failure_at": utcPtr(after.LastFailureAt),
		}})
	}
	if after.SigningSecret != before.SigningSecret && after.SigningSecret != "" {
		out = append(out, reportedEvent{opevents.SecretRotated, map[string]any{"previous_secret_expires_at": utcPtr(after.PreviousSecretExpiresAt)}})
	}
	if after.VerificationState == match.VerificationFailed &&
		(before.VerificationState != match.VerificationFailed || before.VerificationError != after.VerificationError) {
		out = append(out, reportedEvent{opevents.VerificationFailed, map[string]any{"error": after.VerificationError}})
	}
	return out
}

// changedFields names, as the API does, the fields a tenant set that
// differ between before and after. A new secret is its own event.
func changedFields(before, after catalog.Subscription) []string {
	var changed []string
	add := func(name string, differs bool) {
		if differs {
			changed = append(changed, name)
		}
	}
	add("name", before.Name != after.Name)
	add("sink", before.Destination != after.Destination || string(before.SinkConfig) != string(after.SinkConfig) ||
		before.SinkCredentials != after.SinkCredentials)
	add("event_types", !slices.Equal(before.EventTypes, after.EventTypes))
	add("schema_major", before.SchemaMajor != after.SchemaMajor)
	add("origin", before.Origin != after.Origin)
	add("filter", before.Filter != after.Filter)
	add("ordering", before.Ordering != after.Ordering)
	add("rate_limit", before.RateLimit != after.RateLimit)
	add("retry_schedule", !reflect.DeepEqual(before.RetrySchedule, after.RetrySchedule))
	add("attempt_timeout", before.AttemptTimeout != after.AttemptTimeout)
	add("signature_scheme", before.SignatureScheme != after.SignatureScheme)
	return changed
}

// report writes a change's operational events in its transaction, stamped
// at: a change is never reported without having happened, and never
// happens unreported.
func (s *Subscriptions) report(at time.Time) catalog.Report {
	return func(ctx context.Context, tx pgx.Tx, before, after catalog.Subscription) error {
		reported := changeEvents(before, after)
		if len(reported) == 0 {
			return nil
		}
		about := after
		if about.ID == [16]byte{} {
			about = before
		}
		subject := opevents.Subject{ID: about.ID, TenantID: about.TenantID, Name: about.Name}
		events := make([]opstore.Event, len(reported))
		for i, r := range reported {
			var err error
			if events[i], err = s.events.New(r.key, subject, s.actor, at, r.fields); err != nil {
				return err
			}
		}
		_, err := opstore.Write(ctx, tx, events, opevents.Route)
		return err
	}
}
