package match

import (
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/filter"
)

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
	// FilterFailures are the (event, subscription) pairs whose content
	// filter could not say yes or no: the event is kept for the
	// subscription as a dead letter (docs/concepts.md, Dead letters and poison).
	FilterFailures []FilterFailure
}

// FilterFailure is one filter that failed on one event.
type FilterFailure struct {
	Route
	Pull   bool   // the subscription is a pull sink, which has no dead letters
	Reason string // one of filter.Reasons
	Error  string // what failed, for the dead letter's last_error
}

// FilterLimits bound the filter work of one batch.
type FilterLimits struct {
	// EvalTimeout stops one evaluation (filter.MatchesWithin); 0: none.
	EvalTimeout time.Duration
	// Budgets is the filter time each tenant has left; once a tenant's is
	// spent, its filters are not evaluated and fail with
	// filter.ReasonBudget until it refills. nil: no budget.
	Budgets *TenantBudgets
	// Now is the clock evaluations are timed on; nil is time.Now.
	Now func() time.Time
}

// RouteNewEvents decides, for each new event, which of its tenant's
// candidates want it. candidates is keyed by tenant. Callers pass events in
// seq order, so jobs are created in the order dispatch should first attempt
// them.
//
// A candidate's content filter is evaluated after the other rules, and
// only for the events they let through. One filter.Input serves all the
// candidates of an event, so its payload is parsed at most once; the parse
// is charged to the budget of the filter that triggers it.
func RouteNewEvents(events []NewEvent, candidates map[string][]Candidate, limits FilterLimits) Routes {
	var r Routes
	now := limits.Now
	if now == nil {
		now = time.Now
	}
	for _, e := range events {
		var in *filter.Input
		for _, c := range candidates[e.TenantID] {
			if !Matches(c.Subscription, e.Event) {
				continue
			}
			route := Route{SubscriptionID: c.ID, TenantID: e.TenantID, Seq: e.Seq}
			if key, ok := OrderingKey(c.Ordering, e.TenantID, e.Attributes.Subject); ok {
				route.OrderingKey = &key
			}
			if c.Filter != nil || c.FilterErr != nil {
				if in == nil {
					in = filter.NewInput(e.Attributes)
				}
				ok, reason, err := evaluate(c, in, limits, now)
				if err != nil {
					r.FilterFailures = append(r.FilterFailures, FilterFailure{Route: route, Pull: c.Pull, Reason: reason, Error: err.Error()})
					continue
				}
				if !ok {
					continue
				}
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

// evaluate runs c's filter over in within limits, charging the time it
// took to its tenant's budget, and classifies a failure.
func evaluate(c Candidate, in *filter.Input, limits FilterLimits, now func() time.Time) (bool, string, error) {
	if c.FilterErr != nil {
		return false, filter.ReasonInvalid, c.FilterErr
	}
	if limits.Budgets == nil {
		ok, err := c.Filter.MatchesWithin(in, limits.EvalTimeout)
		if err != nil {
			return false, filter.ReasonOf(err), err
		}
		return ok, "", nil
	}
	if !limits.Budgets.available(c.TenantID) {
		return false, filter.ReasonBudget, fmt.Errorf("not evaluated: the tenant's filters spent their budget of %s a second", limits.Budgets.budget)
	}
	start := now()
	ok, err := c.Filter.MatchesWithin(in, limits.EvalTimeout)
	limits.Budgets.spend(c.TenantID, now().Sub(start))
	if err != nil {
		return false, filter.ReasonOf(err), err
	}
	return ok, "", nil
}
