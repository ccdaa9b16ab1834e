package match

// Candidate is one subscription a batch of new events may be routed to, as
// the store loaded it for the batch's tenants.
type Candidate struct {
	ID   [16]byte // the subscription's id; opaque here
	Pull bool     // a pull sink: matched events get a pull entry, not a delivery job
	Subscription
}

// NewEvent is an event the inbox has just taken, with the seq it got.
type NewEvent struct {
	Seq int64
	Event
}

// Route sends one new event to one subscription.
type Route struct {
	SubscriptionID [16]byte
	TenantID       string
	Seq            int64
}

// Routes is what RouteNewEvents decided, each list in the order of the
// events and, per event, of its tenant's candidates.
type Routes struct {
	Jobs []Route // to push sinks: one delivery job each
	Pull []Route // to pull sinks: one pull entry each
}

// RouteNewEvents decides, for each new event, which of its tenant's
// candidates want it. candidates is keyed by tenant. Callers pass events in
// seq order, so jobs are created in the order dispatch should first attempt
// them.
func RouteNewEvents(events []NewEvent, candidates map[string][]Candidate) Routes {
	var r Routes
	for _, e := range events {
		for _, c := range candidates[e.TenantID] {
			if !Matches(c.Subscription, e.Event) {
				continue
			}
			route := Route{SubscriptionID: c.ID, TenantID: e.TenantID, Seq: e.Seq}
			if c.Pull {
				r.Pull = append(r.Pull, route)
			} else {
				r.Jobs = append(r.Jobs, route)
			}
		}
	}
	return r
}
