package match

import (
	"fmt"
	"time"

	"github.com/hubctl/hubctl/internal/filter"
	"github.com/hubctl/hubctl/internal/routing"
)

// The routing vocabulary, shared with the store, which loads the
// candidates and writes the routes (internal/routing).
type (
	Candidate     = routing.Candidate
	NewEvent      = routing.NewEvent
	Route         = routing.Route
	Routes        = routing.Routes
	FilterFailure = routing.FilterFailure
)

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

// Router is RouteNewEvents under limits, as the store takes it: ingest's
// under its filter limits, a recover's with none.
func Router(limits FilterLimits) routing.Router {
	return func(events []NewEvent, candidates map[string][]Candidate) Routes {
		return RouteNewEvents(events, candidates, limits)
	}
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
