package opevents

import (
	"time"

	"github.com/hubctl/hubctl/internal/filter"
	"github.com/hubctl/hubctl/internal/match"
	opstore "github.com/hubctl/hubctl/internal/store/opevents"
)

// filterEvalTimeout bounds one content filter's evaluation over an
// operational event, whose data is small and of the hub's own making.
const filterEvalTimeout = 100 * time.Millisecond

// filters holds the compiled content filters routing has used, per
// subscription version, as ingest's cache does.
var filters = filter.NewCache()

// Receives is the rule operational events add to matching (SPEC §11): an
// event is never delivered to the subscription it is about, so a
// subscription to hub.* whose own endpoint fails hears nothing of itself
// and cannot feed a storm about itself.
func Receives(c opstore.Candidate, e opstore.Stored) bool {
	return c.ID != e.About
}

// Route is a opstore.Router: the rules of matching (event types, schema
// major, origin, content filter, ordering key) and Receives. A filter
// that cannot say yes or no delivers nothing: an operational event has no
// dead letter of its own to keep it in.
func Route(events []opstore.Stored, candidates []opstore.Candidate) []opstore.Target {
	var targets []opstore.Target
	for _, e := range events {
		var pool []match.Candidate
		for _, c := range candidates {
			if c.TenantID == e.TenantID && Receives(c, e) {
				pool = append(pool, candidateOf(c))
			}
		}
		if len(pool) == 0 {
			continue
		}
		routes := match.RouteNewEvents([]match.NewEvent{newEvent(e)}, map[string][]match.Candidate{e.TenantID: pool},
			match.FilterLimits{EvalTimeout: filterEvalTimeout})
		for _, r := range routes.Jobs {
			targets = append(targets, opstore.Target{SubscriptionID: r.SubscriptionID, TenantID: r.TenantID, Seq: r.Seq, OrderingKey: r.OrderingKey})
		}
		for _, r := range routes.Pull {
			targets = append(targets, opstore.Target{SubscriptionID: r.SubscriptionID, TenantID: r.TenantID, Seq: r.Seq, OrderingKey: r.OrderingKey, Pull: true})
		}
	}
	return targets
}

func candidateOf(c opstore.Candidate) match.Candidate {
	mc := match.Candidate{ID: c.ID, Pull: c.SinkType == "pull", Ordering: c.Ordering, Subscription: match.Subscription{
		TenantID: c.TenantID, Enabled: c.Enabled, VerificationState: c.VerificationState,
		EventTypes: c.EventTypes, SchemaMajor: c.SchemaMajor, Origin: c.Origin,
	}}
	if c.Filter != "" {
		mc.Filter, mc.FilterErr = filters.Program(c.ID, c.Version, c.Filter)
	}
	return mc
}

func newEvent(e opstore.Stored) match.NewEvent {
	subject := e.About.String()
	return match.NewEvent{Seq: e.Seq,
		Event: match.Event{TenantID: e.TenantID, Key: e.Key, SchemaMajor: opstore.SchemaMajor, Source: opstore.Source},
		Attributes: filter.Event{
			ID: e.ID.String(), Source: opstore.Source, Key: e.Key, Type: e.Type, Subject: subject, Time: e.Time,
			SchemaVersion: opstore.SchemaVersion, TenantID: e.TenantID, DataContentType: opstore.DataContentType, Data: e.Data,
		}}
}
