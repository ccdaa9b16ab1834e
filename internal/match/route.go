package match

import "github.com/hubctl/hubctl/internal/filter"

// Candidate is one subscription a batch of new events may be routed to, as
// the store loaded it for the batch's tenants.
type Candidate struct {
	ID   [16]byte // the subscription's id; opaque here
	Pull bool     // a pull sink: matched events get a pull entry, not a delivery job
	Subscription
	// Filter is the subscription's compiled content filter, nil when it
	// has none. FilterErr is set instead when its stored expression does
	// not compile: every event is then an evaluation error, no match.
	Filter    *filter.Program
	FilterErr error
	// Ordering is the subscription's ordering mode (OrderingNone, "" or
	// another of Orderings).
	Ordering string
}

// NewEvent is an event the inbox has just taken, with the seq it got.
type NewEvent struct {
	Seq int64
	Event
	// Attributes is what content filters read of the event.
	Attributes filter.Event
}

// Route sends one new event to one subscription.
type Route struct {
	SubscriptionID [16]byte
	TenantID       string
	Seq            int64
	// OrderingKey is the job's ordering key, nil when its subscription
	// orders nothing (OrderingKey).
	OrderingKey *string
}

// Routes is what RouteNewEvents decided, each list in the order of the
// events and, per event, of its tenant's candidates.
type Routes struct {
	Jobs []Route // to push sinks: one delivery job each
	Pull []Route // to pull sinks: one pull entry each
	// FilterErrors counts filter evaluations that failed (a missing
	// field, a type mismatch, the cost limit): each was no match.
	FilterErrors int
}

// RouteNewEvents decides, for each new event, which of its tenant's
// candidates want it. candidates is keyed by tenant. Callers pass events in
// seq order, so jobs are created in the order dispatch should first attempt
// them.
//
// A candidate's content filter is evaluated after the other rules, and
// only for the events they let through. One filter.Input serves all the
// candidates of an event, so its payload is parsed at most once.
func RouteNewEvents(events []NewEvent, candidates map[string][]Candidate) Routes {
	var r Routes
	for _, e := range events {
		var in *filter.Input
		for _, c := range candidates[e.TenantID] {
			if !Matches(c.Subscription, e.Event) {
				continue
			}
			if c.Filter != nil || c.FilterErr != nil {
				if in == nil {
					in = filter.NewInput(e.Attributes)
				}
				if !passes(c, in, &r) {
					continue
				}
			}
			route := Route{SubscriptionID: c.ID, TenantID: e.TenantID, Seq: e.Seq}
			if key, ok := OrderingKey(c.Ordering, e.TenantID, e.Attributes.Subject); ok {
				route.OrderingKey = &key
			}
			if c.Pull {
				r.Pull = append(r.Pull, route)
			} else {
				r.Jobs = append(r.Jobs, route)
			}
		}
	}
	return r
}

// passes evaluates c's filter over in, counting a failed evaluation.
func passes(c Candidate, in *filter.Input, r *Routes) bool {
	if c.FilterErr != nil {
		r.FilterErrors++
		return false
	}
	ok, err := c.Filter.Matches(in)
	if err != nil {
		r.FilterErrors++
		return false
	}
	return ok
}
